package pluginhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// Confinement says whether a Host runs plugin processes confined.
type Confinement struct {
	// Enabled is true when every plugin process except sandbox backends
	// runs confined to what its manifest declares.
	Enabled bool
	// Report is what confine.Probe found; zero when the probe did not run.
	Report confine.Report
	// Reason says why plugins run unconfined, when Enabled is false.
	Reason string
	// Init is the binary that confines each plugin (Options.ConfineInit).
	Init string
}

// Confinement probes this machine, once per Host, and says whether plugin
// processes run confined. Sandbox plugins never are: they are the layer
// that confines commands, and need what they manage (bubblewrap, a
// container engine's socket, ssh keys and the network).
func (h *Host) Confinement(ctx context.Context) Confinement {
	h.probeOnce.Do(func() {
		if h.opts.ConfineInit == "" {
			h.confinement.Reason = "the kernel was given no init binary to confine them with"
			return
		}
		// One caller's cancellation must not leave the Host unconfined.
		var rep confine.Report
		if f := h.probeFile(); f != "" {
			rep = confine.ProbeCached(context.WithoutCancel(ctx), f)
		} else {
			rep = confine.Probe(context.WithoutCancel(ctx))
		}
		h.confinement = Confinement{Enabled: rep.Usable(), Report: rep, Init: h.opts.ConfineInit}
		if !rep.Usable() {
			h.confinement.Reason = "cannot confine here: missing " + strings.Join(rep.Missing, "; ")
		}
	})
	return h.confinement
}

// probeFile is where the confinement probe's answer is kept, or "".
func (h *Host) probeFile() string {
	if h.opts.CacheDir == "" {
		return ""
	}
	return filepath.Join(h.opts.CacheDir, "confine-probe.json")
}

// forgetProbe drops the kept probe answer.
func (h *Host) forgetProbe() {
	if f := h.probeFile(); f != "" {
		confine.Forget(f)
	}
}

// SetWorkspace sets the directory tool plugins get read-write, for a run
// whose sandbox moved its files (a git worktree). A confined tool plugin
// started with another workspace is restarted by its next Start, so call
// it before the run uses its tools.
func (h *Host) SetWorkspace(dir string) {
	h.mu.Lock()
	h.workspace = filepath.Clean(dir)
	h.mu.Unlock()
}

func (h *Host) currentWorkspace() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.workspace
}

// access is what one confined plugin process may reach beyond the system
// view and its own install directory: what its kind gets, and what its
// manifest declares.
type access struct {
	network bool
	// why says why the network is on or off.
	why string
	// workspace is bound read-write; empty when not mounted.
	workspace string
	// home is the user's home directory, an empty directory inside.
	home string
	// readOnly are the declared paths and the files the kernel granted.
	readOnly []string
	// hidden are the credentials under home that a bound path would
	// otherwise show.
	hidden []string
	// dropped are declared paths left out, each with why.
	dropped []string
	env     []string
}

// accessFor works out what spec's plugin may reach, or nil when it runs
// unconfined.
func (h *Host) accessFor(ctx context.Context, spec Spec) *access {
	m := spec.Manifest
	if m.Kind == plugin.KindSandbox || !h.Confinement(ctx).Enabled {
		return nil
	}
	a := &access{network: m.Capabilities.Network, why: "not declared", env: m.Capabilities.Env}
	if a.network {
		a.why = "declared"
	}
	switch m.Kind {
	case plugin.KindProvider:
		if !a.network {
			a.network, a.why = true, "providers reach their APIs"
		}
	case plugin.KindTool:
		a.workspace = h.currentWorkspace()
	case plugin.KindSurface:
		if m.Capabilities.Workspace {
			a.workspace = h.currentWorkspace()
		}
	}
	if a.workspace != "" {
		if fi, err := os.Stat(a.workspace); err != nil || !fi.IsDir() {
			a.dropped = append(a.dropped, "workspace "+a.workspace+" (not a directory)")
			a.workspace = ""
		}
	}
	if home, ok := h.opts.LookupEnv("HOME"); ok && filepath.IsAbs(home) && filepath.Clean(home) != "/" {
		a.home = filepath.Clean(home)
	}
	for _, p := range m.Capabilities.Paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if a.home == "" {
				a.dropped = append(a.dropped, p+" (no home directory)")
				continue
			}
			p = filepath.Join(a.home, rest)
		}
		a.grant(p)
	}
	for _, p := range spec.Files {
		a.grant(p)
	}
	if a.home != "" {
		for _, rel := range config.DefaultHomeDeniedPaths() {
			p := filepath.Join(a.home, rel)
			if !slices.ContainsFunc(a.readOnly, func(r string) bool { return within(p, r) || within(r, p) }) {
				a.hidden = append(a.hidden, p)
			}
		}
	}
	return a
}

// grant adds a read-only path unless it is missing or would show the
// whole home directory.
func (a *access) grant(p string) {
	p = filepath.Clean(p)
	switch {
	case !filepath.IsAbs(p):
		a.dropped = append(a.dropped, p+" (not absolute)")
	case a.home != "" && within(a.home, p):
		a.dropped = append(a.dropped, p+" (holds the home directory)")
	default:
		if _, err := os.Stat(p); err != nil {
			a.dropped = append(a.dropped, p+" (missing)")
			return
		}
		if !slices.Contains(a.readOnly, p) {
			a.readOnly = append(a.readOnly, p)
		}
	}
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// String lists what the process was confined to, for error reports:
// "network off (not declared), workspace not mounted, home empty, ...".
func (a *access) String() string {
	var parts []string
	if a.network {
		parts = append(parts, "network on ("+a.why+")")
	} else {
		parts = append(parts, "network off ("+a.why+")")
	}
	if a.workspace != "" {
		parts = append(parts, "workspace "+a.workspace+" read-write")
	} else {
		parts = append(parts, "workspace not mounted")
	}
	if a.home != "" {
		parts = append(parts, "home empty")
	} else {
		parts = append(parts, "no home")
	}
	if len(a.readOnly) > 0 {
		parts = append(parts, "read-only "+strings.Join(a.readOnly, " "))
	}
	if len(a.dropped) > 0 {
		parts = append(parts, "not mounted "+strings.Join(a.dropped, ", "))
	}
	if len(a.env) > 0 {
		parts = append(parts, "env "+strings.Join(a.env, " ")+" only")
	} else {
		parts = append(parts, "no host env")
	}
	return strings.Join(parts, ", ")
}

// confinedCmd prepares the plugin process under confine: the system view,
// its install directory read-only, go-plugin's socket directory
// read-write (the plugin's listener and the kernel's broker sockets for
// Host calls), and what a grants. The verified bytes are exec'd from the
// inherited sealed memory file, so the bytes hashed are still the bytes
// run; without one, the private copy's directory is bound read-only.
func (h *Host) confinedCmd(m *Manifest, a *access, exe *verified, env []string, socketDir string) (*confine.Cmd, error) {
	install := filepath.Dir(m.Entry)
	spec := confine.Spec{
		Env:       env,
		System:    true,
		Network:   a.network,
		Home:      a.home,
		ReadOnly:  append([]string{install}, a.readOnly...),
		ReadWrite: []string{socketDir},
		Hidden:    a.hidden,
		Init:      h.opts.ConfineInit,
		Dir:       install,
	}
	if a.workspace != "" {
		spec.ReadWrite = append(spec.ReadWrite, a.workspace)
		// A tool must not plant hooks or config that the host's git runs.
		spec.Protected = []string{filepath.Join(a.workspace, ".git")}
		spec.Dir = a.workspace
	}
	if exe.File != nil {
		spec.Argv = []string{"/proc/self/fd/3"}
		spec.ExtraFiles = []*os.File{exe.File}
	} else {
		spec.Argv = []string{exe.Path}
		spec.ReadOnly = append(spec.ReadOnly, filepath.Dir(exe.Path))
	}
	cmd, err := confine.Command(spec, h.Confinement(context.Background()).Report)
	if err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	return cmd, nil
}
