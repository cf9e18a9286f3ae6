// Package local is the local sandbox backend: commands run directly on
// this machine, in the workspace, each in its own process group that is
// killed as a whole. It isolates nothing, and says so: requests for
// isolation or limits it cannot enforce are refused, never ignored.
package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Local is the local backend.
type Local struct {
	mu       sync.Mutex
	sessions map[string]session
	cfg      settings
	getenv   func(string) string
}

type settings struct {
	Shell          string `json:"shell"`
	DefaultTimeout string `json:"default_timeout"`
	MaxOutputBytes int64  `json:"max_output_bytes"`

	timeout time.Duration
}

// session is a prepared workspace and the policy it runs under.
type session struct {
	workdir string
	policy  sandbox.Policy
}

// New returns the backend with default settings.
func New() *Local {
	return &Local{
		sessions: map[string]session{},
		cfg:      settings{Shell: "/bin/sh", DefaultTimeout: "10m", MaxOutputBytes: 1 << 20, timeout: 10 * time.Minute},
		getenv:   os.Getenv,
	}
}

// Name implements sandbox.Sandbox.
func (*Local) Name() string { return "local" }

// Description implements plugin.Describer.
func (*Local) Description() string {
	return "runs commands directly on this machine, in the workspace; no isolation"
}

// ConfigSchema implements plugin.Configurable.
func (*Local) ConfigSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "shell", Type: plugin.String, Default: "/bin/sh", Description: "shell for commands given as one string"},
		{Name: "default_timeout", Type: plugin.Duration, Default: "10m", Description: "timeout when a command sets none"},
		{Name: "max_output_bytes", Type: plugin.Number, Default: 1 << 20, Description: "stdout+stderr kept per command when it sets no cap"},
	}}
}

// Configure implements plugin.Configurable.
func (l *Local) Configure(_ context.Context, c plugin.Config) error {
	cfg := l.settings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	d, err := time.ParseDuration(cfg.DefaultTimeout)
	if err != nil || d <= 0 {
		return fmt.Errorf("local: default_timeout %q: want a positive duration such as 10m", cfg.DefaultTimeout)
	}
	if cfg.MaxOutputBytes <= 0 {
		return fmt.Errorf("local: max_output_bytes must be positive, got %d", cfg.MaxOutputBytes)
	}
	cfg.timeout = d
	l.mu.Lock()
	l.cfg = cfg
	l.mu.Unlock()
	return nil
}

func (l *Local) settings() settings {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// Capabilities implements sandbox.Sandbox.
func (*Local) Capabilities(context.Context) (sandbox.Capabilities, error) {
	return sandbox.Capabilities{Available: true, ResourceLimits: true, PersistentWorkspace: true}, nil
}

// Prepare implements sandbox.Sandbox. Denied paths are enforced as seed
// rules (the workdir and every argument are checked, see Exec); read-only
// paths and network denial cannot be enforced by this backend and are
// refused rather than pretended.
func (l *Local) Prepare(_ context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	if !filepath.IsAbs(req.Workspace) {
		return sandbox.Session{}, fmt.Errorf("local: workspace %q is not an absolute path", req.Workspace)
	}
	if fi, err := os.Stat(req.Workspace); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("local: workspace %s is not a directory", req.Workspace)
	}
	p := req.Policy
	if len(p.ReadOnlyPaths) > 0 {
		return sandbox.Session{}, errors.New("local: this backend cannot enforce read-only paths; use local-hardened or docker")
	}
	if !p.AllowNetwork {
		return sandbox.Session{}, errors.New("local: this backend cannot block network access; use local-hardened or docker")
	}
	id := newID(req.RunID)
	l.mu.Lock()
	l.sessions[id] = session{workdir: req.Workspace, policy: p}
	l.mu.Unlock()
	return sandbox.Session{ID: id, Workdir: req.Workspace}, nil
}

func newID(runID string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	if runID == "" {
		return "local-" + hex.EncodeToString(b)
	}
	return runID + "-" + hex.EncodeToString(b)
}

// Teardown implements sandbox.Sandbox.
func (l *Local) Teardown(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sessions[id]; !ok {
		return fmt.Errorf("local: no session %q", id)
	}
	delete(l.sessions, id)
	return nil
}

// workdir resolves where a command runs: inside its session's workspace,
// never outside it.
func (l *Local) workdir(req sandbox.ExecRequest) (string, sandbox.Policy, error) {
	root := ""
	var policy sandbox.Policy
	if req.SessionID != "" {
		l.mu.Lock()
		s, ok := l.sessions[req.SessionID]
		l.mu.Unlock()
		if !ok {
			return "", policy, fmt.Errorf("no session %q", req.SessionID)
		}
		root, policy = s.workdir, s.policy
	}
	dir, err := resolveWorkdir(root, req.Workdir)
	return dir, policy, err
}

func resolveWorkdir(root, dir string) (string, error) {
	orig := dir
	switch {
	case root == "" && !filepath.IsAbs(dir):
		return "", fmt.Errorf("workdir %q must be absolute without a session", dir)
	case root == "":
		return dir, nil
	case dir == "":
		return root, nil
	case !filepath.IsAbs(dir):
		dir = filepath.Join(root, dir)
	}
	rel, err := filepath.Rel(root, filepath.Clean(dir))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("workdir %q is outside the workspace %s", orig, root)
	}
	return filepath.Clean(dir), nil
}

var (
	_ sandbox.Sandbox     = (*Local)(nil)
	_ plugin.Configurable = (*Local)(nil)
	_ plugin.Describer    = (*Local)(nil)
)
