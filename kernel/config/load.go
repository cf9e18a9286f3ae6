package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// LoadOptions say where to look for configuration and what overrides it.
type LoadOptions struct {
	// Workspace is the directory Sparrow works in; the project file is
	// searched for from here upwards. Empty: no project file (unless
	// ProjectFile is set).
	Workspace string
	// Getenv supplies the environment (pass os.Getenv from main). It
	// resolves paths, the SPARROW_* layer and env() calls in files. Nil is
	// an empty environment.
	Getenv func(string) string
	// Overrides are the command-line flags, the last layer.
	Overrides Overrides
	// UserFile, when set, replaces user file discovery; the file must
	// exist.
	UserFile string
	// ProjectFile, when set, replaces project file discovery; the file
	// must exist.
	ProjectFile string
	// SystemPolicyFile is the system-wide policy, applied last and
	// binding (DefaultSystemPolicyFile in the CLI). Empty: none.
	SystemPolicyFile string
}

// Load merges defaults, the user file, the project file, SPARROW_*
// environment variables and opts.Overrides, in that order, into one
// Config. Missing discovered files are skipped; files named explicitly
// (opts.UserFile, opts.ProjectFile, $SPARROW_CONFIG) must exist.
//
// Load always returns a usable Config holding every value that decoded
// cleanly, with the diagnostics of every layer: errors (with file:line:col
// where there is a file) and warnings, such as untrusted project settings
// that were ignored. Callers must not start a run when
// diags.HasErrors().
func Load(opts LoadOptions) (*Config, hcl.Diagnostics) {
	getenv := orEmptyEnv(opts.Getenv)
	paths := ResolvePaths(opts.Workspace, getenv)
	userExplicit := getenv("SPARROW_CONFIG") != ""
	if opts.UserFile != "" {
		paths.UserFile, userExplicit = opts.UserFile, true
	}
	projectExplicit := opts.ProjectFile != ""
	if projectExplicit {
		paths.ProjectFile = opts.ProjectFile
		paths.ProjectDir = projectDir(opts.ProjectFile)
	}
	if paths.ProjectFile != "" && sameFile(paths.ProjectFile, paths.UserFile) {
		paths.ProjectFile, paths.ProjectDir = "", ""
	}

	cfg := defaults(paths, getenv)
	var diags hcl.Diagnostics

	user, d := readLayer(paths.UserFile, userExplicit, getenv)
	diags = append(diags, d...)
	if user != nil {
		m := &merger{cfg: cfg, src: SourceUser, file: user.path, trusted: true}
		m.apply(user)
		diags = append(diags, m.diags...)
	}

	project, d := readLayer(paths.ProjectFile, projectExplicit, getenv)
	diags = append(diags, d...)
	if project != nil {
		cfg.ProjectTrusted = cfg.trusts(paths.ProjectDir)
		m := &merger{cfg: cfg, src: SourceProject, file: project.path, trusted: cfg.ProjectTrusted}
		m.apply(project)
		sortDiagnostics(m.diags)
		diags = append(diags, m.diags...)
	}

	diags = append(diags, applyEnv(cfg, getenv)...)
	diags = append(diags, applyOverrides(cfg, opts.Overrides)...)
	diags = append(diags, applySystemPolicy(cfg, opts.SystemPolicyFile, getenv)...)
	diags = append(diags, cfg.checkMerged()...)
	return cfg, diags
}

// checkMerged reports what only the merged layers can tell: a routing
// rule that no layer gave a match or a model.
func (c *Config) checkMerged() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, r := range c.Routing.Rules {
		for _, missing := range []struct{ name, value string }{{"match", r.Match}, {"model", r.Model}} {
			if missing.value == "" {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Missing required argument",
					Detail:   fmt.Sprintf("Routing rule %q needs %q.", r.Name, missing.name),
					Subject:  c.ruleRanges[r.Name].Ptr(),
				})
			}
		}
	}
	return diags
}

// readLayer parses one file of the user or project layer. A missing file
// is no layer, unless it was named explicitly.
func readLayer(path string, explicit bool, getenv func(string) string) (*File, hcl.Diagnostics) {
	if path == "" {
		return nil, nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return nil, nil
		}
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read configuration file",
			Detail:   fmt.Sprintf("load config %s: %v", path, err),
		}}
	}
	return parseFile(path, getenv)
}

// trusts reports whether dir is listed in trusted_projects. It is called
// after the user layer and before the project layer, so only the user
// file can grant trust.
func (c *Config) trusts(dir string) bool {
	if dir == "" {
		return false
	}
	want := canonicalDir(dir)
	for _, p := range c.TrustedProjects {
		if canonicalDir(c.expandHome(p)) == want {
			return true
		}
	}
	return false
}

// expandHome replaces a leading "~/" with $HOME.
func (c *Config) expandHome(p string) string {
	rest, ok := strings.CutPrefix(p, "~/")
	if !ok {
		return p
	}
	home := c.getenv("HOME")
	if home == "" {
		return p
	}
	return filepath.Join(home, rest)
}

// canonicalDir cleans a path and resolves symlinks where it can, so that a
// symlinked workspace matches its trusted_projects entry.
func canonicalDir(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}
