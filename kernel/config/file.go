package config

import (
	"cmp"
	"fmt"
	"os"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// File is one configuration file, parsed and validated on its own but not
// yet merged with the other layers.
type File struct {
	path string

	top         topAttrs
	plugins     []*pluginBlock
	components  []*componentBlock
	models      []*modelBlock
	permissions *permissionsBlock
	autonomy    *autonomyBlock
	budget      *budgetBlock
	routing     *routingBlock
	policy      *policyBlock
	checkpoints *checkpointsBlock
}

// Path returns the file's path as it was given to [ParseFile].
func (f *File) Path() string { return f.path }

type topAttrs struct {
	model, sandbox, logLevel       val[string]
	verifyCommand, trustedProjects val[[]string]
	pluginMirrors                  val[[]string]
}

// ParseFile parses and validates one configuration file. It reports every
// problem it finds, each with file:line:column. env("NAME") calls are not
// evaluated: they stand for unknown strings, so checking a file never
// reads the environment. The returned File is nil only when the file
// cannot be read.
func ParseFile(path string) (*File, hcl.Diagnostics) {
	return parseFile(path, nil)
}

// ValidateFile reports every problem in one configuration file, as
// `sparrow config validate FILE` prints them. Plugin-specific attributes
// of component blocks are checked later, against the plugin's schema.
func ValidateFile(path string) hcl.Diagnostics {
	_, diags := ParseFile(path)
	return diags
}

// parseFile reads and decodes a file; getenv backs env() (nil: unknown).
func parseFile(path string, getenv func(string) string) (*File, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read configuration file",
			Detail:   fmt.Sprintf("read config %s: %v", path, err),
		}}
	}
	return parseSource(src, path, getenv)
}

// parseSource decodes HCL source. Decoding goes on after syntax errors,
// so that problems elsewhere in the file are reported in the same pass.
func parseSource(src []byte, filename string, getenv func(string) string) (*File, hcl.Diagnostics) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	file := &File{path: filename}
	if f == nil || f.Body == nil {
		return file, diags
	}
	d := newDecoder(getenv)
	d.diags = diags
	file.decodeRoot(d, f.Body)
	sortDiagnostics(d.diags)
	return file, d.diags
}

func (f *File) decodeRoot(d *decoder, body hcl.Body) {
	content, diags := body.Content(schemaFor(""))
	d.diags = append(d.diags, diags...)
	f.top = decodeTop(d, content.Attributes)

	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		if !d.unique(seen, b) {
			continue
		}
		switch b.Type {
		case "plugin":
			f.plugins = append(f.plugins, decodePlugin(d, b))
		case "provider", "sandbox", "tool", "surface":
			f.components = append(f.components, decodeComponentBlock(d, b))
		case "model":
			f.models = append(f.models, decodeModel(d, b))
		case "permissions":
			f.permissions = decodePermissions(d, b)
		case "autonomy":
			f.autonomy = decodeAutonomy(d, b)
		case "budget":
			f.budget = decodeBudget(d, b)
		case "routing":
			f.routing = decodeRouting(d, b)
		case "policy":
			f.policy = decodePolicy(d, b)
		case "checkpoints":
			f.checkpoints = decodeCheckpoints(d, b)
		}
	}
}

// unique reports whether b is the first block of its type and labels in
// seen, recording an error for a duplicate.
func (d *decoder) unique(seen map[string]hcl.Range, b *hcl.Block) bool {
	key := b.Type
	for _, l := range b.Labels {
		key += "." + l
	}
	if first, dup := seen[key]; dup {
		name := b.Type
		if len(b.Labels) > 0 {
			name = fmt.Sprintf("%s %q", b.Type, b.Labels[0])
		}
		d.errorf(b.DefRange, "Duplicate "+b.Type+" block",
			"A %s block was already defined on line %d; merge the two.", name, first.Start.Line)
		return false
	}
	seen[key] = b.DefRange
	return true
}

func decodeTop(d *decoder, attrs hcl.Attributes) topAttrs {
	t := topAttrs{
		model:           d.str(attrs, "model"),
		sandbox:         d.str(attrs, "sandbox"),
		logLevel:        d.enum(attrs, "log_level", logLevels()),
		verifyCommand:   d.strList(attrs, "verify_command"),
		trustedProjects: d.strList(attrs, "trusted_projects"),
		pluginMirrors:   d.strList(attrs, "plugin_mirrors"),
	}
	if t.sandbox.Set && !d.check(t.sandbox.V != "", attrs, "sandbox", "Invalid value for sandbox",
		"sandbox must name a sandbox, such as %q.", DefaultSandbox) {
		t.sandbox = val[string]{}
	}
	if t.verifyCommand.Set && len(t.verifyCommand.V) > 0 && !d.check(t.verifyCommand.V[0] != "",
		attrs, "verify_command", "Invalid value for verify_command",
		"verify_command is an argv list whose first element is the program, such as [\"go\", \"test\", \"./...\"].") {
		t.verifyCommand = val[[]string]{}
	}
	for _, p := range t.trustedProjects.V {
		if !d.check(isAbsOrHome(p), attrs, "trusted_projects", "Invalid value for trusted_projects",
			"%q is not an absolute path; list project directories as absolute paths (or ~/...).", p) {
			t.trustedProjects = val[[]string]{}
			break
		}
	}
	return t
}

// sortDiagnostics orders diagnostics by file and position; diagnostics
// without a position keep their place at the front.
func sortDiagnostics(diags hcl.Diagnostics) {
	slices.SortStableFunc(diags, func(a, b *hcl.Diagnostic) int {
		switch {
		case a.Subject == nil && b.Subject == nil:
			return 0
		case a.Subject == nil:
			return -1
		case b.Subject == nil:
			return 1
		}
		return cmp.Or(
			cmp.Compare(a.Subject.Filename, b.Subject.Filename),
			cmp.Compare(a.Subject.Start.Byte, b.Subject.Start.Byte),
		)
	})
}
