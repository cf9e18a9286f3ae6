package modal

import (
	"context"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// helperPy is the Python program that drives Modal's SDK.
//
//go:embed helper.py
var helperPy string

// Fixes quoted in every refusal about the CLI or its credentials.
const (
	fixInstall = "modal CLI not found on PATH: pip install modal, then modal token new"
	fixAuth    = "no Modal credentials: run modal token new, or set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET"
)

// Modal is the Modal backend. The zero value is not usable; call New.
type Modal struct {
	mu       sync.Mutex
	sessions map[string]*session
	cfg      settings
	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
}

// New returns the backend with default settings.
func New() *Modal {
	return &Modal{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv}
}

// Name implements sandbox.Sandbox.
func (*Modal) Name() string { return "modal" }

// Description implements plugin.Describer.
func (m *Modal) Description() string {
	cfg := m.settings()
	if cfg.Container != "" {
		return "runs commands in the existing Modal container " + cfg.Container + " (workspace copied to " + cfg.Workdir + ")"
	}
	return "runs commands in a Modal Sandbox (" + cfg.Image + ", app " + cfg.App + "); the workspace is copied up and back"
}

// Capabilities implements sandbox.Sandbox. Network can be blocked only when
// this backend creates the sandbox (Sandbox.create's block_network); an
// existing container is taken as it is. The workspace is a copy, so it is
// not persistent; limits mean the timeout and output cap only.
func (m *Modal) Capabilities(context.Context) (sandbox.Capabilities, error) {
	cfg := m.settings()
	reason := m.unavailable(cfg)
	return sandbox.Capabilities{
		Available:           reason == "",
		UnavailableReason:   reason,
		NetworkControl:      cfg.Container == "",
		FilesystemIsolation: true,
		ResourceLimits:      true,
		PersistentWorkspace: false,
		Remote:              true,
	}, nil
}

// unavailable says why the backend cannot run, or "".
func (m *Modal) unavailable(cfg settings) string {
	if _, err := m.lookPath(cfg.Modal); err != nil {
		return fixInstall
	}
	if !m.hasCredentials() {
		return fixAuth
	}
	return ""
}

// lookPath finds the CLI on the plugin's own PATH.
func (m *Modal) lookPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(m.getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// hasCredentials reports what Modal documents as its credentials
// (modal.com/docs/reference/modal.config): MODAL_TOKEN_ID and
// MODAL_TOKEN_SECRET, which take precedence, or a ~/.modal.toml written by
// `modal token new` / `modal token set`. Whether they are valid is only
// known when Modal answers.
func (m *Modal) hasCredentials() bool {
	if m.getenv("MODAL_TOKEN_ID") != "" && m.getenv("MODAL_TOKEN_SECRET") != "" {
		return true
	}
	if home := m.getenv("HOME"); home != "" {
		if fi, err := os.Stat(filepath.Join(home, ".modal.toml")); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// environ is the environment of the modal and python processes: the
// plugin's own, which the kernel narrowed to what the manifest declares.
func (m *Modal) environ() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "MODAL_PROFILE", "MODAL_ENVIRONMENT"} {
		if v := m.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

var (
	_ sandbox.Sandbox     = (*Modal)(nil)
	_ plugin.Configurable = (*Modal)(nil)
	_ plugin.Describer    = (*Modal)(nil)
)
