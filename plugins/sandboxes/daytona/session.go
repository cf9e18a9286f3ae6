package daytona

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// Bounds on the CLI's own verbs.
const (
	createTimeout = 5 * time.Minute
	startTimeout  = 5 * time.Minute
	infoTimeout   = time.Minute
	deleteTimeout = 2 * time.Minute
	// cleanupBudget bounds each delete when the kernel dies (plugin.Cleaner
	// gets two seconds in all).
	cleanupBudget = 1500 * time.Millisecond
)

// session is a prepared workspace and the sandbox it is copied to.
type session struct {
	// root is the local workspace.
	root string
	// id is the sandbox id every CLI verb addresses.
	id string
	// created is set when this backend created the sandbox, so Teardown
	// deletes it; an existing sandbox is never deleted.
	created bool
	// blocked is set when the sandbox has all network blocked.
	blocked bool
	policy  sandbox.Policy
	cfg     settings
	// scratch is the session's directory for staged files in the sandbox.
	scratch string

	// mu serialises syncs and commands: each command sees the workspace
	// the previous one left.
	mu sync.Mutex
	// mirror is the host side of the workspace copy.
	mirror *wsync.Mirror
	// n counts commands; it names their staging directories.
	n int
}

// Prepare implements sandbox.Sandbox: it creates a Daytona sandbox with
// `daytona create`, waits until `daytona info` reports it started, and
// records its id; or it takes the configured existing sandbox. The
// workspace is copied up before the first command.
func (d *Daytona) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	cfg := d.settings()
	ws := req.Workspace
	if !filepath.IsAbs(ws) {
		return sandbox.Session{}, fmt.Errorf("daytona: prepare: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("daytona: prepare: workspace %s is not a directory", ws)
	}
	if reason := d.unavailable(cfg); reason != "" {
		return sandbox.Session{}, fmt.Errorf("daytona: prepare: %s", reason)
	}
	if len(req.Policy.ReadOnlyPaths) > 0 {
		return sandbox.Session{}, fmt.Errorf("daytona: prepare: this backend cannot enforce read-only paths (%s): the sandbox's copy of the workspace is writable and copied back",
			strings.Join(req.Policy.ReadOnlyPaths, ", "))
	}
	nonce := d.nonce()
	s := &session{root: ws, policy: req.Policy, cfg: cfg, mirror: wsync.New(ws, req.Policy.DeniedPaths),
		scratch: path.Join(d.scratch, ".sparrow-"+nonce)}
	if cfg.Sandbox != "" {
		info, err := d.info(ctx, cfg, cfg.Sandbox)
		if err != nil {
			return sandbox.Session{}, fmt.Errorf("daytona: prepare: %w", err)
		}
		if !req.Policy.AllowNetwork && !info.NetworkBlockAll {
			return sandbox.Session{}, fmt.Errorf("daytona: prepare: the policy denies network access but the existing sandbox %s does not block it; leave `sandbox` unset so Sparrow creates one with --network-block-all", cfg.Sandbox)
		}
		if info.State != "started" {
			return sandbox.Session{}, fmt.Errorf("daytona: prepare: sandbox %s is %s, not started: run `daytona start %s`", cfg.Sandbox, info.State, cfg.Sandbox)
		}
		s.id, s.blocked = info.ID, info.NetworkBlockAll
	} else {
		info, err := d.create(ctx, cfg, sandboxName(req.RunID, nonce), !req.Policy.AllowNetwork)
		if err != nil {
			return sandbox.Session{}, fmt.Errorf("daytona: prepare: %w", err)
		}
		s.id, s.blocked, s.created = info.ID, !req.Policy.AllowNetwork, true
	}
	sid := sessionID(req.RunID, nonce)
	d.mu.Lock()
	d.sessions[sid] = s
	d.mu.Unlock()
	return sandbox.Session{ID: sid, Workdir: cfg.Workdir}, nil
}

// sandboxInfo is what `daytona info ID --format json` prints (the API's
// Sandbox object); only these fields are read.
type sandboxInfo struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	State           string `json:"state"`
	NetworkBlockAll bool   `json:"networkBlockAll"`
	ErrorReason     string `json:"errorReason"`
}

// create runs `daytona create` under a name chosen here (the CLI prints a
// preview URL, not the id) and waits until the sandbox has started. A
// sandbox that never starts is deleted again.
func (d *Daytona) create(ctx context.Context, cfg settings, name string, blockNetwork bool) (sandboxInfo, error) {
	args := []string{"create", "--name", name}
	if cfg.Snapshot != "" {
		args = append(args, "--snapshot", cfg.Snapshot)
	}
	target := cfg.Target
	if target == "" {
		target = d.getenv("DAYTONA_TARGET")
	}
	if target != "" {
		args = append(args, "--target", target)
	}
	args = append(args, "--auto-stop", strconv.Itoa(cfg.AutoStop), "--auto-delete", "0")
	if blockNetwork {
		args = append(args, "--network-block-all")
	}
	if _, err := d.call(ctx, cfg, createTimeout, args...); err != nil {
		return sandboxInfo{}, fmt.Errorf("create sandbox: %w", err)
	}
	info, err := d.waitStarted(ctx, cfg, name)
	if err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		defer cancel()
		if _, derr := d.call(dctx, cfg, deleteTimeout, "delete", name); derr != nil {
			return sandboxInfo{}, fmt.Errorf("create sandbox %s: %w; deleting it failed too (%v): delete it with `daytona delete %s`", name, err, derr, name)
		}
		return sandboxInfo{}, fmt.Errorf("create sandbox %s: %w (it was deleted)", name, err)
	}
	if info.NetworkBlockAll != blockNetwork {
		return info, fmt.Errorf("create sandbox %s: asked for network-block-all=%t, Daytona reports %t", name, blockNetwork, info.NetworkBlockAll)
	}
	return info, nil
}

// waitStarted polls `daytona info` until the sandbox has started.
func (d *Daytona) waitStarted(ctx context.Context, cfg settings, name string) (sandboxInfo, error) {
	deadline := time.Now().Add(startTimeout)
	for {
		info, err := d.info(ctx, cfg, name)
		if err != nil {
			return info, err
		}
		switch info.State {
		case "started":
			return info, nil
		case "error", "build_failed", "destroyed", "destroying", "stopped", "stopping", "archived":
			reason := ""
			if info.ErrorReason != "" {
				reason = ": " + info.ErrorReason
			}
			return info, fmt.Errorf("the sandbox is %s%s", info.State, reason)
		}
		if time.Now().After(deadline) {
			return info, fmt.Errorf("the sandbox did not start within %s (state %q)", startTimeout, info.State)
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(d.poll):
		}
	}
}

// info runs `daytona info NAME --format json`.
func (d *Daytona) info(ctx context.Context, cfg settings, name string) (sandboxInfo, error) {
	out, err := d.call(ctx, cfg, infoTimeout, "info", name, "--format", "json")
	if err != nil {
		return sandboxInfo{}, err
	}
	var info sandboxInfo
	i := bytes.IndexByte(out, '{')
	if i < 0 || json.NewDecoder(bytes.NewReader(out[i:])).Decode(&info) != nil || info.ID == "" {
		return sandboxInfo{}, fmt.Errorf("daytona info %s answered %q, not a sandbox as JSON", name, strings.TrimSpace(string(out)))
	}
	if !validName.MatchString(info.ID) {
		return sandboxInfo{}, fmt.Errorf("daytona info %s: unexpected sandbox id %q", name, info.ID)
	}
	info.State = strings.ToLower(info.State)
	return info, nil
}

// sandboxName names a created sandbox after its run, with the nonce.
func sandboxName(runID, nonce string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(runID) {
		if b.Len() >= 24 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "sparrow-" + nonce
	}
	return "sparrow-" + b.String() + "-" + nonce
}

// sessionID names a session after its run, with the nonce.
func sessionID(runID, nonce string) string {
	if runID == "" {
		runID = "daytona"
	}
	return runID + "-" + nonce
}

// Teardown implements sandbox.Sandbox. A sandbox this backend created is
// deleted with `daytona delete ID`; in an existing one only the session's
// staging directory is removed. Tearing down an unknown session is not an
// error (idempotent).
func (d *Daytona) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	d.mu.Lock()
	s, ok := d.sessions[id]
	delete(d.sessions, id)
	d.mu.Unlock()
	if !ok {
		return sandbox.Released{}, nil
	}
	if err := d.release(ctx, s, deleteTimeout); err != nil {
		return sandbox.Released{}, fmt.Errorf("daytona: teardown: %w", err)
	}
	return sandbox.Released{}, nil
}

// release deletes a created sandbox, or clears the staging directory of an
// existing one.
func (d *Daytona) release(ctx context.Context, s *session, timeout time.Duration) error {
	if s.created {
		if _, err := d.call(ctx, s.cfg, timeout, "delete", s.id); err != nil {
			return fmt.Errorf("sandbox %s: %w", s.id, err)
		}
		return nil
	}
	if _, err := d.call(ctx, s.cfg, timeout, "exec", s.id, "--timeout", "60", "--", "rm", "-rf", s.scratch, s.synced()); err != nil {
		return fmt.Errorf("sandbox %s: remove %s: %w", s.id, s.scratch, err)
	}
	return nil
}

// Cleanup implements plugin.Cleaner: when the kernel dies, CLI runs still
// going are killed and every sandbox this backend created is deleted.
func (d *Daytona) Cleanup() {
	d.live.KillAll()
	d.mu.Lock()
	var created []*session
	for id, s := range d.sessions {
		if s.created {
			created = append(created, s)
		}
		delete(d.sessions, id)
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range created {
		wg.Go(func() { _ = d.release(context.Background(), s, cleanupBudget) })
	}
	wg.Wait()
}

func (d *Daytona) session(id string) (*session, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.sessions[id]
	return s, ok
}
