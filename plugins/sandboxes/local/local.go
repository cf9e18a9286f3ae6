package local

import (
	"context"
	"os"
	"sync"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Local is the local backend. The zero value is not usable; call New.
type Local struct {
	mu       sync.Mutex
	sessions map[string]session
	cfg      settings
	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
	// live are the process groups of running commands.
	live proc.Groups
}

// New returns the backend with default settings.
func New() *Local {
	return &Local{sessions: map[string]session{}, cfg: defaultSettings(), getenv: os.Getenv}
}

// Name implements sandbox.Sandbox.
func (*Local) Name() string { return "local" }

// Description implements plugin.Describer.
func (l *Local) Description() string {
	return "runs commands directly on this machine, in the workspace; no isolation (shell " + l.settings().Shell + ")"
}

// Capabilities implements sandbox.Sandbox. Resource limits are reported
// because timeouts and output caps are enforced; memory, process, disk and
// CPU-time limits are refused per command (see Exec). Off Unix the backend
// is unavailable.
func (*Local) Capabilities(context.Context) (sandbox.Capabilities, error) {
	return sandbox.Capabilities{
		Available:           unavailableReason == "",
		UnavailableReason:   unavailableReason,
		NetworkControl:      false,
		FilesystemIsolation: false,
		ResourceLimits:      true,
		PersistentWorkspace: true,
		Remote:              false,
	}, nil
}

// Cleanup implements plugin.Cleaner: when the kernel dies, every command
// still running is killed with everything it started in its group.
func (l *Local) Cleanup() { l.live.KillAll() }

var (
	_ plugin.Cleaner      = (*Local)(nil)
	_ sandbox.Sandbox     = (*Local)(nil)
	_ plugin.Configurable = (*Local)(nil)
	_ plugin.Describer    = (*Local)(nil)
)
