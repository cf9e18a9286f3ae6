package ssh

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// Bounds of the housekeeping ssh runs; commands have their own timeout.
const (
	// masterTimeout is added to connect_timeout for opening a master
	// (authentication, a ProxyJump hop).
	masterTimeout = 30 * time.Second
	// opTimeout bounds a signal, a status read, a master check or close.
	opTimeout = 15 * time.Second
	// releaseTimeout bounds removing a session's remote directory.
	releaseTimeout = time.Minute
	// cleanupTimeout keeps Cleanup inside the two seconds it gets.
	cleanupTimeout = 1800 * time.Millisecond
)

// session is a prepared workspace and its copy on the host.
type session struct {
	id string
	// root is the local workspace.
	root string
	// dir is the session's remote directory as `pwd -P` gave it; the
	// workspace copy is dir/workspace (ws), the wrappers' pid and status
	// files live in dir/ctl (ctl), outside the synced tree.
	dir, ws, ctl string
	// control is the local socket of the session's master connection.
	control string
	policy  sandbox.Policy
	cfg     settings

	// mu serialises syncs and commands: each command sees the workspace
	// the previous one left.
	mu sync.Mutex
	// mirror is the host side of the workspace copy.
	mirror *wsync.Mirror
}

// Prepare implements sandbox.Sandbox: it opens the session's master
// connection, creates the session's remote directory (one that did not
// exist, so Teardown only ever removes what this backend made) and
// copies the workspace there, denied paths left out.
func (b *SSH) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	cfg := b.settings()
	if reason := b.unavailable(cfg); reason != "" {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: %s", reason)
	}
	ws := req.Workspace
	if !filepath.IsAbs(ws) {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: workspace %s is not a directory", ws)
	}
	if len(req.Policy.ReadOnlyPaths) > 0 {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: this backend cannot enforce read-only paths (%s): the remote copy of the workspace is writable and copied back",
			strings.Join(req.Policy.ReadOnlyPaths, ", "))
	}
	if !req.Policy.AllowNetwork {
		return sandbox.Session{}, errors.New("ssh: prepare: this backend cannot block network access on the remote host; use docker or a backend with network control")
	}
	if err := ensureKnownHosts(cfg.knownHosts); err != nil {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: known_hosts: %w", err)
	}
	if err := privateDir(cfg.controlDir); err != nil {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: control socket directory: %w", err)
	}
	id := newID(req.RunID)
	s := &session{id: id, root: ws, control: controlPath(cfg.controlDir, id), policy: req.Policy, cfg: cfg,
		mirror: wsync.New(ws, req.Policy.DeniedPaths)}
	if err := b.openMaster(ctx, s); err != nil {
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: %w", err)
	}
	if err := b.makeDir(ctx, s); err != nil {
		b.closeMaster(s)
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: %w", err)
	}
	if err := b.push(ctx, s); err != nil {
		_ = b.release(context.WithoutCancel(ctx), s)
		return sandbox.Session{}, fmt.Errorf("ssh: prepare: %w", err)
	}
	b.mu.Lock()
	b.sessions[id] = s
	b.mu.Unlock()
	return sandbox.Session{ID: id, Workdir: s.ws}, nil
}

// makeDir creates the session's remote directory, private to the login
// (umask 077), and learns its physical path. mkdir without -p for the
// session's own directory: it must be new.
func (b *SSH) makeDir(ctx context.Context, s *session) error {
	script := "set -e; umask 077; b=" + remoteBase(s.cfg.RemoteDir) + "; mkdir -p \"$b\"; cd \"$b\"; " +
		"mkdir " + quote(s.id) + "; cd " + quote(s.id) + "; mkdir workspace ctl; pwd -P"
	var out bytes.Buffer
	if err := b.remote(ctx, s, script, nil, &out); err != nil {
		return fmt.Errorf("create the remote session directory under %s: %w", s.cfg.RemoteDir, err)
	}
	dir := lastLine(out.String())
	if !path.IsAbs(dir) || path.Clean(dir) != dir || dir == "/" {
		return fmt.Errorf("create the remote session directory: the host answered %q, not a directory (does a shell startup file print something?)", dir)
	}
	s.dir, s.ws, s.ctl = dir, dir+"/workspace", dir+"/ctl"
	return nil
}

// remote runs script with sh on the host through the session's master,
// feeding it stdin and writing its stdout to stdout. A script that fails
// is an error with its last stderr line; ssh failing is explained.
func (b *SSH) remote(ctx context.Context, s *session, script string, stdin io.Reader, stdout io.Writer) error {
	var errOut tailBuffer
	cmd := b.command(ctx, s.cfg, s.control, asClient, nil, shell(script))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &errOut
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 && ee.ExitCode() != exitSSH {
		if msg := lastLine(errOut.String()); msg != "" {
			return fmt.Errorf("the remote shell failed (exit %d): %s", ee.ExitCode(), msg)
		}
		return fmt.Errorf("the remote shell failed (exit %d)", ee.ExitCode())
	}
	return b.failure(s.cfg, err, errOut.String())
}

// openMaster makes sure the session's master connection is up, opening
// it when it is not (first use, or it expired after controlPersist): one
// authenticated connection that every later ssh of the session reuses.
// Its output goes to a file, never a pipe: the master stays in the
// background and must not hold anything this process waits on.
func (b *SSH) openMaster(ctx context.Context, s *session) error {
	if b.masterUp(ctx, s) {
		return nil
	}
	errFile, err := os.CreateTemp(s.cfg.controlDir, "master-*.log")
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer os.Remove(errFile.Name())
	defer errFile.Close()
	mctx, cancel := context.WithTimeout(ctx, s.cfg.connectTimeout+masterTimeout)
	defer cancel()
	cmd := b.command(mctx, s.cfg, s.control, asMaster, []string{"-N"}, "")
	cmd.Stderr = errFile
	err = cmd.Run()
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	msg, _ := os.ReadFile(errFile.Name())
	return b.failure(s.cfg, err, string(msg))
}

// masterUp asks the master over its socket whether it runs (ssh -O
// check; no network).
func (b *SSH) masterUp(ctx context.Context, s *session) bool {
	if _, err := os.Stat(s.control); err != nil {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return b.command(cctx, s.cfg, s.control, asClient, []string{"-O", "check"}, "").Run() == nil
}

// closeMaster asks the master to exit (ssh -O exit); one that is gone
// already is fine.
func (b *SSH) closeMaster(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := os.Stat(s.control); err != nil {
		return
	}
	_ = b.command(ctx, s.cfg, s.control, asClient, []string{"-O", "exit"}, "").Run()
}

// Teardown implements sandbox.Sandbox: it stops what still runs in the
// session, removes the session's remote directory and closes its master
// connection. Tearing down an unknown session is not an error
// (idempotent); a remote directory that could not be removed is, and
// the error names it.
func (b *SSH) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	b.mu.Lock()
	s, ok := b.sessions[id]
	delete(b.sessions, id)
	b.mu.Unlock()
	if !ok {
		return sandbox.Released{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	if err := b.release(ctx, s); err != nil {
		return sandbox.Released{}, fmt.Errorf("ssh: teardown: %w", err)
	}
	return sandbox.Released{}, nil
}

// release kills what the session's wrappers still run, removes the
// session's remote directory and closes the master.
func (b *SSH) release(ctx context.Context, s *session) error {
	defer b.closeMaster(s)
	if s.dir == "" {
		return nil
	}
	script := "d=" + quote(s.dir) + `; for f in "$d"/ctl/*.pid; do [ -f "$f" ] && kill -s KILL -- -"$(cat "$f")" 2>/dev/null; done; ` +
		`chmod -R u+w "$d" 2>/dev/null; rm -rf "$d"`
	if err := b.remote(ctx, s, script, nil, io.Discard); err != nil {
		return fmt.Errorf("remove %s on %s: %w; remove it by hand", s.dir, s.cfg.Host, err)
	}
	return nil
}

// Cleanup implements plugin.Cleaner: when the kernel dies, every session
// is released at once, its remote commands killed and its remote
// directory removed, as far as the time Cleanup gets allows.
func (b *SSH) Cleanup() {
	b.mu.Lock()
	all := make([]*session, 0, len(b.sessions))
	for _, s := range b.sessions {
		all = append(all, s)
	}
	clear(b.sessions)
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() { _ = b.release(ctx, s) })
	}
	wg.Wait()
}

func (b *SSH) session(id string) (*session, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[id]
	return s, ok
}

// newID names a session after its run, with a random suffix so two
// Prepares for one run never collide. It is also the session's remote
// directory name, so only [A-Za-z0-9._-] survive from the run id.
func newID(runID string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, runID)
	clean = strings.TrimLeft(clean, ".-")
	if len(clean) > 64 {
		clean = clean[:64]
	}
	if clean == "" {
		clean = "ssh"
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return clean + "-" + hex.EncodeToString(b)
}

func quote(s string) string { return wsync.Quote(s) }

func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
