package daytona

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Fixes quoted in every refusal about the CLI or its credentials. The
// install commands are the ones daytona.io/docs/en/getting-started
// documents.
const (
	fixInstall = "the daytona CLI is not on PATH: install it (brew install daytonaio/cli/daytona, or the daytona-linux-amd64/-arm64 binary from https://github.com/daytonaio/daytona/releases/latest; see https://www.daytona.io/docs/en/getting-started) and run `daytona login`"
	fixLogin   = "run `daytona login`, or set DAYTONA_API_KEY and DAYTONA_API_URL"
	fixAuth    = "the daytona CLI is not logged in: " + fixLogin
)

// Daytona is the Daytona backend. The zero value is not usable; call New.
type Daytona struct {
	mu       sync.Mutex
	sessions map[string]*session
	cfg      settings
	live     proc.Groups

	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
	// nonce names sandboxes, scratch directories and exit markers; tests
	// make it deterministic.
	nonce func() string
	// scratch is the directory in the sandbox that holds staged files.
	scratch string
	// poll is how often Prepare asks whether a new sandbox has started.
	poll time.Duration
}

// New returns the backend with default settings.
func New() *Daytona {
	return &Daytona{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv,
		nonce: randomHex, scratch: "/tmp", poll: time.Second}
}

// Name implements sandbox.Sandbox.
func (*Daytona) Name() string { return "daytona" }

// Description implements plugin.Describer.
func (d *Daytona) Description() string {
	cfg := d.settings()
	if cfg.Sandbox != "" {
		return "runs commands in the existing Daytona sandbox " + cfg.Sandbox + " (workspace copied to " + cfg.Workdir + ")"
	}
	snap := cfg.Snapshot
	if snap == "" {
		snap = "the default snapshot"
	}
	return "runs commands in a Daytona sandbox created from " + snap + "; the workspace is copied up and back"
}

// Capabilities implements sandbox.Sandbox. Network can be blocked only in a
// sandbox this backend creates (`daytona create --network-block-all`); an
// existing one is taken as it is. The workspace is a copy, so it is not
// persistent; limits mean the timeout and output cap only.
func (d *Daytona) Capabilities(context.Context) (sandbox.Capabilities, error) {
	cfg := d.settings()
	reason := d.unavailable(cfg)
	return sandbox.Capabilities{
		Available:           reason == "",
		UnavailableReason:   reason,
		NetworkControl:      cfg.Sandbox == "",
		FilesystemIsolation: true,
		ResourceLimits:      true,
		PersistentWorkspace: false,
		Remote:              true,
	}, nil
}

// unavailable says why the backend cannot run, or "".
func (d *Daytona) unavailable(cfg settings) string {
	if _, err := d.lookPath(cfg.CLI); err != nil {
		return fixInstall
	}
	if !d.loggedIn() {
		return fixAuth
	}
	return ""
}

// lookPath finds the CLI on the plugin's own PATH.
func (d *Daytona) lookPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(d.getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// loggedIn reports what the daytona CLI takes as credentials
// (apps/cli/config): DAYTONA_API_KEY with DAYTONA_API_URL, which make an
// "env" profile, or an active profile holding an API key or a token in
// config.json, written by `daytona login`. Whether they are valid is only
// known when Daytona answers.
func (d *Daytona) loggedIn() bool {
	if d.getenv("DAYTONA_API_KEY") != "" && d.getenv("DAYTONA_API_URL") != "" {
		return true
	}
	b, err := os.ReadFile(d.configPath())
	if err != nil {
		return false
	}
	var c struct {
		Active   string `json:"activeProfile"`
		Profiles []struct {
			ID  string `json:"id"`
			API struct {
				Key   *string `json:"key"`
				Token *struct {
					AccessToken string `json:"accessToken"`
				} `json:"token"`
			} `json:"api"`
		} `json:"profiles"`
	}
	if json.Unmarshal(b, &c) != nil {
		return false
	}
	for _, p := range c.Profiles {
		if p.ID != c.Active {
			continue
		}
		return (p.API.Key != nil && *p.API.Key != "") || (p.API.Token != nil && p.API.Token.AccessToken != "")
	}
	return false
}

// configPath is the CLI's config.json: DAYTONA_CONFIG_DIR, else Go's
// os.UserConfigDir()/daytona, computed from the plugin's environment.
func (d *Daytona) configPath() string {
	if dir := d.getenv("DAYTONA_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "config.json")
	}
	home := d.getenv("HOME")
	dir := filepath.Join(home, ".config")
	switch {
	case runtime.GOOS == "darwin":
		dir = filepath.Join(home, "Library", "Application Support")
	case d.getenv("XDG_CONFIG_HOME") != "":
		dir = d.getenv("XDG_CONFIG_HOME")
	}
	return filepath.Join(dir, "daytona", "config.json")
}

// cliEnv are the plugin variables the daytona CLI gets. None of them
// reaches a command.
var cliEnv = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "DAYTONA_API_KEY", "DAYTONA_API_URL", "DAYTONA_TARGET", "DAYTONA_CONFIG_DIR"}

// environ is the environment of the daytona CLI.
func (d *Daytona) environ() []string {
	var env []string
	for _, k := range cliEnv {
		if v := d.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var (
	_ sandbox.Sandbox     = (*Daytona)(nil)
	_ plugin.Configurable = (*Daytona)(nil)
	_ plugin.Describer    = (*Daytona)(nil)
	_ plugin.Cleaner      = (*Daytona)(nil)
)
