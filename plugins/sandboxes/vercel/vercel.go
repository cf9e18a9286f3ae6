package vercel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Fixes quoted in every refusal about the CLI or its credentials: the
// install and login commands vercel.com/docs/sandbox/cli-reference
// documents, and the variables the CLI and SDK read.
const (
	fixInstall = "the Vercel Sandbox CLI (`sandbox`) is not on PATH: install it (npm i -g sandbox; see https://vercel.com/docs/sandbox/cli-reference) and run `sandbox login`"
	fixLogin   = "run `sandbox login`, or set VERCEL_TOKEN (with VERCEL_TEAM_ID and VERCEL_PROJECT_ID) or VERCEL_OIDC_TOKEN"
	fixAuth    = "the Vercel Sandbox CLI has no credentials: " + fixLogin
)

// Vercel is the Vercel Sandbox backend. The zero value is not usable;
// call New.
type Vercel struct {
	mu       sync.Mutex
	sessions map[string]*session
	cfg      settings
	live     proc.Groups

	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
	// nonce names staged files and exit markers; tests make it
	// deterministic.
	nonce func() string
	// scratch is the directory in the sandbox that holds staged files.
	scratch string
}

// New returns the backend with default settings.
func New() *Vercel {
	return &Vercel{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv, nonce: randomHex, scratch: "/tmp"}
}

// Name implements sandbox.Sandbox.
func (*Vercel) Name() string { return "vercel-sandbox" }

// Description implements plugin.Describer.
func (v *Vercel) Description() string {
	cfg := v.settings()
	if cfg.Sandbox != "" {
		return "runs commands in the existing Vercel Sandbox " + cfg.Sandbox + " (workspace copied to " + cfg.Workdir + ")"
	}
	from := "the default runtime"
	switch {
	case cfg.Snapshot != "":
		from = "snapshot " + cfg.Snapshot
	case cfg.Runtime != "":
		from = "runtime " + cfg.Runtime
	}
	return "runs commands in a Vercel Sandbox created from " + from + "; the workspace is copied up and back"
}

// Capabilities implements sandbox.Sandbox. Network can be blocked only in
// a sandbox this backend creates (`--network-policy deny-all`); an
// existing one is taken as it is. The workspace is a copy, so it is not
// persistent; limits mean the timeout and output cap only.
func (v *Vercel) Capabilities(context.Context) (sandbox.Capabilities, error) {
	cfg := v.settings()
	reason := v.unavailable(cfg)
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

// unavailable says why the backend cannot run, or "". Without credentials
// the CLI starts an interactive device login and waits for it, so it is
// never run then.
func (v *Vercel) unavailable(cfg settings) string {
	if _, err := v.lookPath(cfg.CLI); err != nil {
		return fixInstall
	}
	if !v.hasCredentials() {
		return fixAuth
	}
	return ""
}

// lookPath finds the CLI on the plugin's own PATH.
func (v *Vercel) lookPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(v.getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// hasCredentials reports what the CLI takes as credentials
// (packages/sandbox/src/args/auth.ts): VERCEL_AUTH_TOKEN (VERCEL_TOKEN is
// passed to it under that name), VERCEL_OIDC_TOKEN, or the token
// `sandbox login` stores in auth.json under the Vercel CLI's data
// directory (xdg-app-paths "com.vercel.cli", or the legacy ~/.now).
// Whether they are valid is only known when Vercel answers.
func (v *Vercel) hasCredentials() bool {
	for _, k := range []string{"VERCEL_AUTH_TOKEN", "VERCEL_TOKEN", "VERCEL_OIDC_TOKEN"} {
		if v.getenv(k) != "" {
			return true
		}
	}
	for _, p := range v.authFiles() {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var a struct {
			Token string `json:"token"`
		}
		if json.Unmarshal(b, &a) == nil && a.Token != "" {
			return true
		}
	}
	return false
}

// authFiles are where `sandbox login` may have stored its token.
func (v *Vercel) authFiles() []string {
	home := v.getenv("HOME")
	var files []string
	if d := v.getenv("XDG_DATA_HOME"); d != "" {
		files = append(files, filepath.Join(d, "com.vercel.cli", "auth.json"))
	}
	if home != "" {
		files = append(files,
			filepath.Join(home, ".local", "share", "com.vercel.cli", "auth.json"),
			filepath.Join(home, "Library", "Application Support", "com.vercel.cli", "auth.json"),
			filepath.Join(home, ".now", "auth.json"))
	}
	return files
}

// cliEnv are the plugin variables the CLI may get. None of them reaches a
// command.
var cliEnv = []string{"PATH", "HOME", "XDG_DATA_HOME", "VERCEL_AUTH_TOKEN", "VERCEL_TOKEN", "VERCEL_OIDC_TOKEN", "VERCEL_TEAM_ID", "VERCEL_PROJECT_ID"}

// environ is the environment of the CLI: PATH, HOME, XDG_DATA_HOME and the
// credentials, with VERCEL_TOKEN given as VERCEL_AUTH_TOKEN (the name the
// CLI reads) unless that is set. Colour is off, so the command line the
// CLI echoes can be recognised, and so is the CLI's usage telemetry
// (VERCEL_SANDBOX_TELEMETRY_DISABLED), whose upload can hold every call
// for up to 1.5 s.
func (v *Vercel) environ() []string {
	env := []string{"FORCE_COLOR=0", "VERCEL_SANDBOX_TELEMETRY_DISABLED=1"}
	for _, k := range []string{"PATH", "HOME", "XDG_DATA_HOME", "VERCEL_OIDC_TOKEN"} {
		if val := v.getenv(k); val != "" {
			env = append(env, k+"="+val)
		}
	}
	token := v.getenv("VERCEL_AUTH_TOKEN")
	if token == "" {
		token = v.getenv("VERCEL_TOKEN")
	}
	if token != "" {
		env = append(env, "VERCEL_AUTH_TOKEN="+token)
	}
	return env
}

// scopeArgs are `--scope TEAM --project PROJECT`, as far as known.
func (v *Vercel) scopeArgs(cfg settings) []string {
	var args []string
	team, project := cfg.Team, cfg.Project
	if team == "" {
		team = v.getenv("VERCEL_TEAM_ID")
	}
	if project == "" {
		project = v.getenv("VERCEL_PROJECT_ID")
	}
	if team != "" {
		args = append(args, "--scope", team)
	}
	if project != "" {
		args = append(args, "--project", project)
	}
	return args
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// verbTimeout bounds the CLI's own verbs (create, copy, remove).
const verbTimeout = 5 * time.Minute

var (
	_ sandbox.Sandbox     = (*Vercel)(nil)
	_ plugin.Configurable = (*Vercel)(nil)
	_ plugin.Describer    = (*Vercel)(nil)
	_ plugin.Cleaner      = (*Vercel)(nil)
)
