package vercel

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// cleanupBudget bounds each removal when the kernel dies (plugin.Cleaner
// gets two seconds in all).
const cleanupBudget = 1500 * time.Millisecond

// session is a prepared workspace and the sandbox it is copied to.
type session struct {
	// root is the local workspace; the CLI runs there.
	root string
	// name is the sandbox every CLI verb addresses.
	name string
	// created is set when this backend created the sandbox, so Teardown
	// removes it; an existing sandbox is never removed.
	created bool
	// blocked is set when the sandbox was created with network denied.
	blocked bool
	policy  sandbox.Policy
	cfg     settings
	// scratch prefixes the session's staged files in the sandbox.
	scratch string

	// mu serialises syncs and commands: each command sees the workspace
	// the previous one left.
	mu sync.Mutex
	// mirror is the host side of the workspace copy.
	mirror *wsync.Mirror
}

// Prepare implements sandbox.Sandbox: it creates a sandbox with
// `sandbox create` and records the name it prints, or takes the configured
// existing sandbox. The workspace is copied up before the first command.
func (v *Vercel) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	cfg := v.settings()
	ws := req.Workspace
	if !filepath.IsAbs(ws) {
		return sandbox.Session{}, fmt.Errorf("vercel-sandbox: prepare: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("vercel-sandbox: prepare: workspace %s is not a directory", ws)
	}
	if reason := v.unavailable(cfg); reason != "" {
		return sandbox.Session{}, fmt.Errorf("vercel-sandbox: prepare: %s", reason)
	}
	if len(req.Policy.ReadOnlyPaths) > 0 {
		return sandbox.Session{}, fmt.Errorf("vercel-sandbox: prepare: this backend cannot enforce read-only paths (%s): the sandbox's copy of the workspace is writable and copied back",
			strings.Join(req.Policy.ReadOnlyPaths, ", "))
	}
	nonce := v.nonce()
	s := &session{root: ws, policy: req.Policy, cfg: cfg, mirror: wsync.New(ws, req.Policy.DeniedPaths),
		scratch: path.Join(v.scratch, ".sparrow-"+nonce)}
	if cfg.Sandbox != "" {
		if !req.Policy.AllowNetwork {
			return sandbox.Session{}, fmt.Errorf("vercel-sandbox: prepare: the policy denies network access, which Sparrow cannot verify or enforce in the existing sandbox %s; leave `sandbox` unset so Sparrow creates one with --network-policy deny-all", cfg.Sandbox)
		}
		s.name = cfg.Sandbox
	} else {
		name, err := v.create(ctx, cfg, ws, !req.Policy.AllowNetwork)
		if err != nil {
			return sandbox.Session{}, fmt.Errorf("vercel-sandbox: prepare: %w", err)
		}
		s.name, s.created, s.blocked = name, true, !req.Policy.AllowNetwork
	}
	sid := req.RunID
	if sid == "" {
		sid = "vercel"
	}
	sid += "-" + nonce
	v.mu.Lock()
	v.sessions[sid] = s
	v.mu.Unlock()
	return sandbox.Session{ID: sid, Workdir: cfg.Workdir}, nil
}

// ansi matches terminal colour codes, in case FORCE_COLOR is overridden.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// create runs `sandbox create` and returns the sandbox's name, which the
// CLI writes alone to stdout (everything else goes to stderr:
// src/util/print-sandbox-summary.ts). --non-persistent: the filesystem,
// a copy of the workspace, is discarded when the sandbox stops.
func (v *Vercel) create(ctx context.Context, cfg settings, dir string, blockNetwork bool) (string, error) {
	args := append([]string{"create"}, v.scopeArgs(cfg)...)
	args = append(args, "--non-persistent")
	switch {
	case cfg.Snapshot != "":
		args = append(args, "--snapshot", cfg.Snapshot)
	case cfg.Runtime != "":
		args = append(args, "--runtime", cfg.Runtime)
	}
	args = append(args, "--timeout", seconds(cfg.timeout))
	if blockNetwork {
		args = append(args, "--network-policy", "deny-all")
	}
	out, err := v.call(ctx, cfg, dir, verbTimeout, args...)
	if err != nil {
		return "", fmt.Errorf("create sandbox: %w", err)
	}
	name := strings.TrimSpace(ansi.ReplaceAllString(string(out), ""))
	if i := strings.LastIndexByte(name, '\n'); i >= 0 {
		name = strings.TrimSpace(name[i+1:])
	}
	if !validName.MatchString(name) {
		return "", fmt.Errorf("create sandbox: sandbox create printed %q, not a sandbox name; if a sandbox was created, find it with `sandbox list` and remove it with `sandbox remove NAME`", strings.TrimSpace(string(out)))
	}
	return name, nil
}

// Teardown implements sandbox.Sandbox. A sandbox this backend created is
// removed with `sandbox remove NAME`; in an existing one only the
// session's staged files are removed. Tearing down an unknown session is
// not an error (idempotent).
func (v *Vercel) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	v.mu.Lock()
	s, ok := v.sessions[id]
	delete(v.sessions, id)
	v.mu.Unlock()
	if !ok {
		return sandbox.Released{}, nil
	}
	if err := v.release(ctx, s, verbTimeout); err != nil {
		return sandbox.Released{}, fmt.Errorf("vercel-sandbox: teardown: %w", err)
	}
	return sandbox.Released{}, nil
}

// release removes a created sandbox, or the staged files in an existing
// one.
func (v *Vercel) release(ctx context.Context, s *session, timeout time.Duration) error {
	if s.created {
		if _, err := v.call(ctx, s.cfg, s.root, timeout, append(append([]string{"remove"}, v.scopeArgs(s.cfg)...), s.name)...); err != nil {
			return fmt.Errorf("sandbox %s: %w", s.name, err)
		}
		return nil
	}
	args := append(append([]string{"exec"}, v.scopeArgs(s.cfg)...), "--timeout", "60s", s.name, "--", "sh", "-c", "rm -f "+wsync.Quote(s.scratch)+"-*")
	if _, err := v.call(ctx, s.cfg, s.root, timeout, args...); err != nil {
		return fmt.Errorf("sandbox %s: remove %s-*: %w", s.name, s.scratch, err)
	}
	return nil
}

// Cleanup implements plugin.Cleaner: when the kernel dies, CLI runs still
// going are killed and every sandbox this backend created is removed.
func (v *Vercel) Cleanup() {
	v.live.KillAll()
	v.mu.Lock()
	var created []*session
	for id, s := range v.sessions {
		if s.created {
			created = append(created, s)
		}
		delete(v.sessions, id)
	}
	v.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range created {
		wg.Go(func() { _ = v.release(context.Background(), s, cleanupBudget) })
	}
	wg.Wait()
}

func (v *Vercel) session(id string) (*session, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.sessions[id]
	return s, ok
}
