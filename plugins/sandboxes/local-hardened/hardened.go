package localhardened

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// Hardened is the local-hardened backend. The zero value is not usable;
// call New.
type Hardened struct {
	mu       sync.Mutex
	sessions map[string]*session
	cfg      settings
	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
	// live are the process groups of running commands.
	live proc.Groups
	// probed is set once the machine's primitives were probed.
	probed bool
	report confine.Report
	// init is the small init Sparrow handed over (confine.InitEnv) when
	// it speaks this plugin's protocol; empty: this plugin's own binary.
	init string
	// stateDir is Sparrow's state directory (from Configure); commands'
	// homes live below it. Empty: each command gets an empty home.
	stateDir string
	// perCommand runs every command in a sandbox of its own, as before
	// sessions shared one (benchmarks compare the two).
	perCommand bool
}

// New returns the backend with default settings.
func New() *Hardened {
	return &Hardened{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv}
}

// Name implements sandbox.Sandbox.
func (*Hardened) Name() string { return "local-hardened" }

// Description implements plugin.Describer.
func (*Hardened) Description() string {
	return "runs commands on this machine in namespaces, Landlock, seccomp and a cgroup: the workspace read-write, a read-only system, nothing else of the host"
}

// probe finds the machine's primitives once.
func (h *Hardened) probe(ctx context.Context) confine.Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.probed {
		h.report = confine.Probe(ctx)
		h.probed = true
		// The kernel's init (sparrow-init) starts in a fraction of the
		// time of this binary and, as a session's server, stays resident
		// at a fraction of its memory. One from another build is not used.
		if p := h.getenv(confine.InitEnv); p != "" && h.report.Usable() {
			if err := confine.CheckInit(ctx, p); err == nil {
				h.init = p
			}
		}
	}
	return h.report
}

// initPath is the init commands are confined with: Sparrow's, or "" for
// this binary. Call probe first.
func (h *Hardened) initPath() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.init
}

// Capabilities implements sandbox.Sandbox: unavailable, with what is
// missing and how to get it, where a required primitive is absent.
func (h *Hardened) Capabilities(ctx context.Context) (sandbox.Capabilities, error) {
	rep := h.probe(ctx)
	prot := rep.Protections()
	for _, f := range rep.Fallbacks {
		prot = append(prot, "fallback: "+f)
	}
	c := sandbox.Capabilities{
		Available:           rep.Usable(),
		NetworkControl:      true,
		FilesystemIsolation: true,
		ResourceLimits:      true,
		PersistentWorkspace: true,
		Protections:         prot,
	}
	if !c.Available {
		c.UnavailableReason = "missing " + strings.Join(rep.Missing, "; ")
		c.Protections = nil
	}
	return c, nil
}

// Cleanup implements plugin.Cleaner: when the kernel dies, every command
// still running is killed with its whole sandbox, and every session's
// sandbox is stopped.
func (h *Hardened) Cleanup() {
	h.live.KillAll()
	h.mu.Lock()
	sessions := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		s.boxes.closeAll()
	}
}

var (
	_ plugin.Cleaner      = (*Hardened)(nil)
	_ sandbox.Sandbox     = (*Hardened)(nil)
	_ plugin.Configurable = (*Hardened)(nil)
	_ plugin.Describer    = (*Hardened)(nil)
)
