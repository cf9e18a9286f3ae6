package pluginhost

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// ManifestFile is the manifest's file name inside a plugin directory.
const ManifestFile = "plugin.hcl"

// Runtime is how a plugin runs.
type Runtime string

// Runtimes.
const (
	RuntimeGRPC Runtime = "grpc"
	RuntimeWASM Runtime = "wasm"
)

// Manifest describes one plugin, read from its plugin.hcl.
type Manifest struct {
	Name    string
	Kind    plugin.Kind
	Version *semver.Version
	// SDK is the range of SDK versions the plugin speaks; SDKRange is its
	// text as written.
	SDK      *semver.Constraints
	SDKRange string
	Runtime  Runtime
	// Entry is the absolute path of the executable or WASM module.
	Entry string
	// SHA256 is the entry's expected hash (lower-case hex), when the
	// manifest pins one.
	SHA256 string
	// Components are the providers, tools, sandboxes or surfaces served.
	Components []string
	// Description is one line for `sparrow plugin list`.
	Description  string
	Capabilities Capabilities
	// Tools describe a WASM tool plugin's tools, one per component in
	// component order: what the kernel knows of a module without running
	// it. Empty for gRPC plugins, which describe themselves.
	Tools []WASMTool
	// File is the manifest's path.
	File string
}

// Capabilities are what a plugin declares it needs from the host. Where
// plugin processes run confined (see [Host.Confinement]) they get nothing
// else: no network, no workspace, no home, no host environment.
type Capabilities struct {
	// Network allows network access. Provider plugins always have it.
	Network bool
	// Paths are extra host paths the plugin may read: absolute, or
	// "~/..." below the user's home directory.
	Paths []string
	// Env are the host environment variables passed to the plugin.
	Env []string
	// Workspace gives a surface plugin the workspace read-write. Tool
	// plugins always have it; provider plugins never do.
	Workspace bool
	// Clock and Random give a WASM module the host's real clock and
	// entropy; without them it sees deterministic fakes. Only WASM
	// plugins declare them.
	Clock, Random bool
}

type manifestFile struct {
	Plugin manifestBlock `hcl:"plugin,block"`
}

type manifestBlock struct {
	Name         string            `hcl:"name,label"`
	Kind         string            `hcl:"kind"`
	Version      string            `hcl:"version"`
	SDK          string            `hcl:"sdk"`
	Runtime      string            `hcl:"runtime,optional"`
	Entry        string            `hcl:"entry"`
	SHA256       string            `hcl:"sha256,optional"`
	Components   []string          `hcl:"components"`
	Description  string            `hcl:"description,optional"`
	Capabilities *capabilitiesBody `hcl:"capabilities,block"`
	Tools        []toolBlock       `hcl:"tool,block"`
	Remain       hcl.Body          `hcl:",remain"`
}

type capabilitiesBody struct {
	Network   bool     `hcl:"network,optional"`
	Paths     []string `hcl:"paths,optional"`
	Env       []string `hcl:"env,optional"`
	Workspace bool     `hcl:"workspace,optional"`
	Clock     bool     `hcl:"clock,optional"`
	Random    bool     `hcl:"random,optional"`
}

var (
	pluginName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hexSHA256  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ReadManifest reads and validates a manifest. Every problem is reported,
// each with the file, line and column it concerns.
func ReadManifest(path string) (*Manifest, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read plugin manifest", Detail: err.Error()}}
	}
	return ParseManifest(path, src)
}

// ParseManifest parses manifest source read from path.
func ParseManifest(path string, src []byte) (*Manifest, hcl.Diagnostics) {
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		return nil, diags
	}
	var mf manifestFile
	if diags = gohcl.DecodeBody(f.Body, nil, &mf); diags.HasErrors() {
		return nil, diags
	}
	b := mf.Plugin
	attrs, _ := b.Remain.JustAttributes()
	for _, a := range attrs {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
			Detail: fmt.Sprintf("A plugin manifest has no %q attribute.", a.Name), Subject: a.NameRange.Ptr()})
	}
	content, _, _ := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "plugin", LabelNames: []string{"name"}}}})
	rng := content.Blocks[0].DefRange
	attrRange := func(name string) *hcl.Range {
		inner, _, _ := content.Blocks[0].Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: name}}})
		if a, ok := inner.Attributes[name]; ok {
			return a.Expr.Range().Ptr()
		}
		return &rng
	}
	bad := func(attr, format string, args ...any) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
			Detail: fmt.Sprintf(format, args...), Subject: attrRange(attr)})
	}

	m := &Manifest{Name: b.Name, Runtime: Runtime(b.Runtime), SHA256: strings.ToLower(b.SHA256),
		Components: b.Components, Description: b.Description, File: path}
	if !pluginName.MatchString(b.Name) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
			Detail: fmt.Sprintf("Plugin name %q must be lower-case letters, digits and '-', starting with a letter.", b.Name), Subject: &rng})
	}
	var err error
	if m.Kind, err = plugin.ParseKind(b.Kind); err != nil {
		bad("kind", "%s.", err)
	}
	if m.Version, err = semver.StrictNewVersion(b.Version); err != nil {
		bad("version", "Version %q is not a semantic version such as 1.2.3.", b.Version)
	}
	m.SDKRange = b.SDK
	if m.SDK, err = semver.NewConstraint(b.SDK); err != nil {
		bad("sdk", "SDK constraint %q: %s.", b.SDK, err)
	}
	if m.Runtime == "" {
		m.Runtime = RuntimeGRPC
	}
	if m.Runtime != RuntimeGRPC && m.Runtime != RuntimeWASM {
		bad("runtime", "Runtime %q: want \"grpc\" or \"wasm\".", b.Runtime)
	}
	if b.Entry == "" || filepath.IsAbs(b.Entry) || strings.HasPrefix(filepath.Clean(b.Entry), "..") {
		bad("entry", "Entry %q must be a file inside the plugin directory.", b.Entry)
	}
	m.Entry = filepath.Join(filepath.Dir(path), filepath.Clean(b.Entry))
	if m.SHA256 != "" && !hexSHA256.MatchString(m.SHA256) {
		bad("sha256", "sha256 must be 64 hexadecimal digits.")
	}
	if len(b.Components) == 0 {
		bad("components", "A plugin serves at least one component.")
	}
	for i, c := range b.Components {
		if c == "" || slices.Contains(b.Components[:i], c) {
			bad("components", "Component %q is empty or listed twice.", c)
		}
	}
	if c := b.Capabilities; c != nil {
		m.Capabilities = Capabilities{Network: c.Network, Paths: c.Paths, Env: c.Env, Workspace: c.Workspace,
			Clock: c.Clock, Random: c.Random}
		for _, p := range c.Paths {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
					Detail: fmt.Sprintf("capabilities.paths: %q is neither absolute nor below the home directory (\"~/...\").", p), Subject: &rng})
			}
		}
		if c.Workspace && m.Kind == plugin.KindProvider {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
				Detail: "capabilities.workspace: a provider plugin never gets the workspace; the model sees files only through tools.", Subject: &rng})
		}
		for _, e := range c.Env {
			if !envName.MatchString(e) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
					Detail: fmt.Sprintf("capabilities.env: %q is not an environment variable name.", e), Subject: &rng})
			}
		}
	}
	diags = append(diags, m.checkRuntime(b, content.Blocks[0])...)
	if diags.HasErrors() {
		return nil, diags
	}
	return m, diags
}
