package kernel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// baseEnv are the host variables every command may see where the backend
// runs on this machine; remote backends keep their own.
var baseEnv = []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"}

// SandboxOptions open a sandbox session.
type SandboxOptions struct {
	// Backend names the sandbox; empty means the configured one.
	Backend string
	// RunID names the session for the backend (branch names, labels).
	RunID string
	// Workspace is the host directory; empty means the kernel's.
	Workspace string
	// AllowNetwork grants network to the session. Backends without
	// network control always have it; for them the gate judges commands.
	AllowNetwork bool
	// EnvAllow names host variables commands may see beyond the base set;
	// their values are passed with every command.
	EnvAllow []string
	// DenyRead are paths commands may neither read nor write, on top of
	// the default denials under $HOME (config.DefaultHomeDeniedPaths).
	// Relative paths are taken from the workspace.
	DenyRead []string
	// DenyWrite are paths commands may read but not write; relative
	// paths are taken from the workspace.
	DenyWrite []string
	// ExtraRead are paths commands may read beyond what the backend shows
	// anyway; relative paths are taken from the workspace.
	ExtraRead []string
	// ExtraWrite are paths commands may write besides the workspace;
	// relative paths are taken from the workspace.
	ExtraWrite []string
}

// SandboxUnavailableError is a backend that cannot run here or could not
// prepare the workspace (no engine, no credentials, not a git repo): the
// fix is outside Sparrow, and `sandbox exec` exits 127.
type SandboxUnavailableError struct {
	Backend string
	Err     error
}

func (e *SandboxUnavailableError) Error() string {
	return "sandbox " + e.Backend + ": " + e.Err.Error()
}

func (e *SandboxUnavailableError) Unwrap() error { return e.Err }

// SandboxSession is a prepared sandbox: the same path a run's commands
// take, usable on its own by `sparrow sandbox exec`.
type SandboxSession struct {
	// Backend is the sandbox's name.
	Backend string
	// Fallback says why the session runs on local instead of the default
	// sandbox, which cannot run here; empty when it does not.
	Fallback string
	Sandbox  sandbox.Sandbox
	Session  sandbox.Session
	Caps     sandbox.Capabilities
	Policy   sandbox.Policy
	// Workspace is where the session's files live on this machine: the
	// requested workspace, or the backend's (a git worktree).
	Workspace string
	// env are the values of SandboxOptions.EnvAllow, passed with every
	// command.
	env map[string]string
}

// OpenSandbox starts the backend, checks it can run here and prepares a
// session under the policy compiled from the permissions, the options'
// paths and the default denials under $HOME (see compilePolicy). Options
// that make no policy are a *SandboxPolicyError; a backend that cannot
// run or prepare here is a *SandboxUnavailableError.
func (k *Kernel) OpenSandbox(ctx context.Context, o SandboxOptions) (*SandboxSession, error) {
	name := o.Backend
	if name == "" {
		name = k.Config.Sandbox
	}
	ws := o.Workspace
	if ws == "" {
		ws = k.opts.Workspace
	}
	sb, err := k.Sandbox(ctx, name)
	if err != nil {
		return nil, err
	}
	caps, err := sb.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	var fallback string
	if !caps.Available && o.Backend == "" && k.sandboxIsDefault() && name != fallbackSandbox {
		// Nobody chose the default: say it cannot run here and use local,
		// rather than refuse every run on a machine without bubblewrap.
		// A sandbox the user named never falls back.
		fallback = fmt.Sprintf("sparrow: sandbox %s is unavailable here (%s); commands run on %s, without isolation. Fix that, or set sandbox = %q to run there knowingly.",
			name, caps.UnavailableReason, fallbackSandbox, fallbackSandbox)
		if fsb, ferr := k.Sandbox(ctx, fallbackSandbox); ferr == nil {
			if fcaps, ferr := fsb.Capabilities(ctx); ferr == nil && fcaps.Available {
				name, sb, caps = fallbackSandbox, fsb, fcaps
				fmt.Fprintln(k.opts.Stderr, fallback)
			}
		}
	}
	if !caps.Available {
		return nil, &SandboxUnavailableError{Backend: name, Err: fmt.Errorf("unavailable here: %s", caps.UnavailableReason)}
	}
	s := &SandboxSession{Fallback: fallback, Backend: name, Sandbox: sb, Caps: caps, env: map[string]string{}}
	allow := slices.Clone(baseEnv)
	for _, v := range o.EnvAllow {
		if !slices.Contains(allow, v) {
			allow = append(allow, v)
		}
		if val, ok := k.lookupEnv(v); ok {
			s.env[v] = val
		}
	}
	home, _ := k.lookupEnv("HOME")
	s.Policy, err = compilePolicy(policyInput{workspace: ws, home: home, denied: k.Config.Permissions.DeniedPaths,
		envAllow: allow, options: o, caps: caps})
	if err != nil {
		return nil, &SandboxPolicyError{Backend: name, Err: err}
	}
	s.Session, err = sb.Prepare(ctx, sandbox.PrepareRequest{RunID: o.RunID, Workspace: ws, Policy: s.Policy})
	if err != nil {
		return nil, &SandboxUnavailableError{Backend: name, Err: err}
	}
	s.Workspace = ws
	if hw := s.Session.HostWorkspace; hw != "" {
		if fi, err := os.Stat(hw); err != nil || !fi.IsDir() || !filepath.IsAbs(hw) {
			s.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("sandbox %s: prepare: the backend's workspace %q is not an absolute directory on this machine", name, hw)
		}
		s.Workspace = filepath.Clean(hw)
	}
	return s, nil
}

// Exec runs one command in the session: the session's workdir unless the
// request names one (relative to it), with the allowed host variables.
func (s *SandboxSession) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	req.SessionID = s.Session.ID
	switch {
	case req.Workdir == "":
		req.Workdir = s.Session.Workdir
	case !filepath.IsAbs(req.Workdir):
		req.Workdir = filepath.Join(s.Session.Workdir, req.Workdir)
	}
	if len(s.env) > 0 {
		env := make(map[string]string, len(s.env)+len(req.Env))
		for k, v := range s.env {
			env[k] = v
		}
		for k, v := range req.Env {
			env[k] = v
		}
		req.Env = env
	}
	return s.Sandbox.Exec(ctx, req, sio)
}

// Close tears the session down and returns what the backend wants the
// user to know (where a worktree's changes are), or "".
func (s *SandboxSession) Close(ctx context.Context) string {
	rel, err := s.Sandbox.Teardown(ctx, s.Session.ID)
	if err != nil {
		return fmt.Sprintf("sandbox %s: teardown: %v", s.Backend, err)
	}
	return rel.Notice
}

// fallbackSandbox is where runs go when the default sandbox, which
// nobody chose, cannot run on this machine.
const fallbackSandbox = "local"

// sandboxIsDefault reports whether the sandbox is the built-in default
// rather than one a configuration layer, variable or flag chose.
func (k *Kernel) sandboxIsDefault() bool {
	src := k.Config.Origins["sandbox"].Source
	return src == "" || src == config.SourceDefault
}

// lookupEnv reads the kernel's environment.
func (k *Kernel) lookupEnv(name string) (string, bool) {
	if k.opts.LookupEnv != nil {
		return k.opts.LookupEnv(name)
	}
	v := k.opts.Getenv(name)
	return v, v != ""
}
