package ssh

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Fixes quoted in the refusals about what is missing.
const (
	fixHost    = `no host configured: set host in the sandbox "ssh" block (sandbox "ssh" { host = "build.example.com" }), and see the ssh sandbox README for setting up the host key`
	fixInstall = `the OpenSSH client was not found: install it (apt install openssh-client, dnf install openssh-clients, brew install openssh) or set ssh in the sandbox "ssh" block to its path`
)

// SSH is the ssh backend. The zero value is not usable; call New.
type SSH struct {
	mu       sync.Mutex
	sessions map[string]*session
	cfg      settings
	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
}

// New returns the backend with default settings; it is unavailable until
// a host is configured.
func New() *SSH {
	return &SSH{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv}
}

// Name implements sandbox.Sandbox.
func (*SSH) Name() string { return "ssh" }

// Description implements plugin.Describer.
func (b *SSH) Description() string {
	cfg := b.settings()
	if cfg.Host == "" {
		return "runs commands on a remote host over OpenSSH (no host configured)"
	}
	return "runs commands on " + cfg.Host + " over OpenSSH; the workspace is copied to " + cfg.RemoteDir + "/<session> and back"
}

// Capabilities implements sandbox.Sandbox. The commands run on another
// machine that holds only the workspace copy (filesystem isolation), but
// this backend cannot control that machine's network, and its limits are
// the timeout and the output cap only.
func (b *SSH) Capabilities(context.Context) (sandbox.Capabilities, error) {
	reason := b.unavailable(b.settings())
	return sandbox.Capabilities{
		Available:           reason == "",
		UnavailableReason:   reason,
		NetworkControl:      false,
		FilesystemIsolation: true,
		ResourceLimits:      true,
		PersistentWorkspace: false,
		Remote:              true,
	}, nil
}

// unavailable says why the backend cannot run, or "".
func (b *SSH) unavailable(cfg settings) string {
	switch {
	case cfg.Host == "":
		return fixHost
	case cfg.configErr != "":
		return cfg.configErr
	}
	if _, err := b.lookPath(cfg.SSH); err != nil {
		return fixInstall
	}
	if cfg.identity != "" {
		if _, err := os.Stat(cfg.identity); err != nil {
			return "identity_file " + cfg.identity + " does not exist: create a key with ssh-keygen -t ed25519 -f " + cfg.identity + " and add its .pub to the host's ~/.ssh/authorized_keys, or fix identity_file"
		}
	}
	return ""
}

// lookPath finds the ssh client on the plugin's own PATH.
func (b *SSH) lookPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(b.getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// environ is the ssh client's environment: what it needs (PATH for a
// ProxyCommand, HOME, the agent socket) and nothing else from the
// plugin's own environment.
func (b *SSH) environ() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "SSH_AUTH_SOCK"} {
		if v := b.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

var (
	_ sandbox.Sandbox     = (*SSH)(nil)
	_ plugin.Configurable = (*SSH)(nil)
	_ plugin.Describer    = (*SSH)(nil)
	_ plugin.Cleaner      = (*SSH)(nil)
)
