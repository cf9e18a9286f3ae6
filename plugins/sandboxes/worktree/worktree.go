// Package worktree is the git worktree sandbox backend: each run works in
// its own `git worktree` on a branch named sparrow/<run-id>, under
// Sparrow's state directory, and commands run there exactly as the local
// backend runs them. The user's checkout is never touched; at the end the
// run's changes are committed to the branch and the user merges or
// discards them (`sparrow worktree merge|discard`).
//
// The layout is a contract with the CLI's worktree verbs:
//
//	branch   sparrow/<run-id>
//	path     <state>/worktrees/<repo-name>-<8 hex of the repo path's SHA-256>/<run-id>
package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/local"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// BranchPrefix starts every branch this backend creates.
const BranchPrefix = "sparrow/"

// Worktree is the backend. It embeds the local backend, which runs the
// commands and is configured by the same attributes.
type Worktree struct {
	*local.Local
	mu       sync.Mutex
	stateDir string
	sessions map[string]*session
	// git is the git binary; tests may point it elsewhere.
	git string
}

// session is one run's worktree.
type session struct {
	repo, path, branch, base string
	// dirty is set when the user's checkout had uncommitted changes,
	// which the worktree (made from HEAD) does not have.
	dirty bool
}

// New returns the backend.
func New() *Worktree {
	return &Worktree{Local: local.New(), sessions: map[string]*session{}, git: "git"}
}

// Name implements sandbox.Sandbox.
func (*Worktree) Name() string { return "worktree" }

// Description implements plugin.Describer.
func (*Worktree) Description() string {
	return "runs each run in its own git worktree on a sparrow/<run> branch, commands as the local backend runs them; merge or discard afterwards"
}

// Configure implements plugin.Configurable: the local backend's
// attributes, plus where worktrees live.
func (w *Worktree) Configure(ctx context.Context, c plugin.Config) error {
	if err := w.Local.Configure(ctx, c); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	w.mu.Lock()
	w.stateDir = c.StateDir
	w.mu.Unlock()
	return nil
}

// Capabilities implements sandbox.Sandbox: the local backend's, and
// unavailable without git.
func (w *Worktree) Capabilities(ctx context.Context) (sandbox.Capabilities, error) {
	caps, err := w.Local.Capabilities(ctx)
	if err != nil || !caps.Available {
		return caps, err
	}
	if _, err := exec.LookPath(w.git); err != nil {
		caps.Available = false
		caps.UnavailableReason = "git is not on PATH: install git (the worktree backend runs `git worktree`)"
	}
	return caps, nil
}

// Dir is where the worktrees of the repository at top live.
func Dir(stateDir, top string) string {
	sum := sha256.Sum256([]byte(top))
	return filepath.Join(stateDir, "worktrees", filepath.Base(top)+"-"+hex.EncodeToString(sum[:4]))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Prepare implements sandbox.Sandbox: `git worktree add -B sparrow/<run>
// <path> HEAD` in the workspace's repository, then a local session rooted
// in the worktree (in the same subdirectory when the workspace is one).
// A workspace outside git, or a repository without a commit, fails
// clearly.
func (w *Worktree) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	fail := func(format string, args ...any) (sandbox.Session, error) {
		return sandbox.Session{}, fmt.Errorf("worktree: prepare: "+format, args...)
	}
	if !filepath.IsAbs(req.Workspace) {
		return fail("workspace %q is not an absolute path", req.Workspace)
	}
	w.mu.Lock()
	stateDir := w.stateDir
	w.mu.Unlock()
	if stateDir == "" {
		return fail("no state directory to keep worktrees in; set HOME or XDG_STATE_HOME")
	}
	top, err := w.run(ctx, req.Workspace, "rev-parse", "--show-toplevel")
	if err != nil {
		return fail("%s is not inside a git repository, and this backend branches one; run `git init` and commit, or use sandbox = \"local\"", req.Workspace)
	}
	base, err := w.run(ctx, top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return fail("the repository at %s has no commit yet; commit once so the worktree has something to start from", top)
	}
	rel, err := filepath.Rel(top, mustReal(req.Workspace))
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	name := strings.Trim(unsafeName.ReplaceAllString(req.RunID, "-"), "-.")
	if name == "" {
		name = "run"
	}
	dir := Dir(stateDir, top)
	// -B resets a branch that exists: never reuse one, it may hold work.
	branch, path := BranchPrefix+name, filepath.Join(dir, name)
	for i := 2; w.exists(ctx, top, branch) || fileExists(path); i++ {
		branch, path = fmt.Sprintf("%s%s-%d", BranchPrefix, name, i), filepath.Join(dir, fmt.Sprintf("%s-%d", name, i))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail("%v", err)
	}
	if _, err := w.run(ctx, top, "worktree", "add", "--quiet", "-B", branch, path, base); err != nil {
		return fail("%v", err)
	}
	status, _ := w.run(ctx, top, "status", "--porcelain", "--untracked-files=no")
	s := &session{repo: top, path: path, branch: branch, base: base, dirty: status != ""}
	ws := filepath.Join(path, rel)
	if !fileExists(ws) {
		// The subdirectory is not in HEAD (untracked): work at the root.
		ws = path
	}
	p := req.Policy
	p.ReadWritePaths = []string{ws}
	// Denials inside the workspace asked for hold for the same files of
	// the worktree.
	p.DenyRead, p.DenyWrite = rebase(p.DenyRead, req.Workspace, ws), rebase(p.DenyWrite, req.Workspace, ws)
	sess, err := w.Local.Prepare(ctx, sandbox.PrepareRequest{RunID: req.RunID, Workspace: ws, Policy: p})
	if err != nil {
		_ = w.remove(context.WithoutCancel(ctx), s)
		return sandbox.Session{}, fmt.Errorf("worktree: %w", err)
	}
	w.mu.Lock()
	w.sessions[sess.ID] = s
	w.mu.Unlock()
	sess.HostWorkspace = ws
	return sess, nil
}

// Teardown implements sandbox.Sandbox: what the run changed is committed
// to its branch and the notice says how to merge or discard it; a run
// that changed nothing leaves no worktree and no branch behind.
func (w *Worktree) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	if _, err := w.Local.Teardown(ctx, id); err != nil {
		return sandbox.Released{}, err
	}
	w.mu.Lock()
	s := w.sessions[id]
	delete(w.sessions, id)
	w.mu.Unlock()
	if s == nil {
		return sandbox.Released{}, nil
	}
	if err := commit(ctx, w.git, s.path, "sparrow: changes of run "+strings.TrimPrefix(s.branch, BranchPrefix)); err != nil {
		return sandbox.Released{}, fmt.Errorf("worktree: teardown: %w (the worktree is kept at %s)", err, s.path)
	}
	stat, err := w.run(ctx, s.repo, "diff", "--shortstat", s.base, s.branch)
	if err != nil {
		return sandbox.Released{}, fmt.Errorf("worktree: teardown: %w (the worktree is kept at %s)", err, s.path)
	}
	if stat == "" {
		if err := w.remove(ctx, s); err != nil {
			return sandbox.Released{}, fmt.Errorf("worktree: teardown: %w", err)
		}
		return sandbox.Released{Notice: "worktree: no changes; the worktree and branch " + s.branch + " were removed"}, nil
	}
	id = strings.TrimPrefix(s.branch, BranchPrefix)
	var b strings.Builder
	fmt.Fprintf(&b, "worktree: the run's changes are on branch %s (%s)\n", s.branch, stat)
	fmt.Fprintf(&b, "  look:    git diff %s...%s   (worktree %s)\n", short(s.base), s.branch, s.path)
	fmt.Fprintf(&b, "  merge:   sparrow worktree merge %s\n", id)
	fmt.Fprintf(&b, "  discard: sparrow worktree discard %s", id)
	if s.dirty {
		b.WriteString("\n  note: the worktree started from HEAD; your uncommitted changes were not in it")
	}
	return sandbox.Released{Notice: b.String()}, nil
}

// commit commits everything in the worktree at path, if anything changed.
// Without a configured git identity it commits as Sparrow.
func commit(ctx context.Context, git, path, message string) error {
	if out, err := gitOut(ctx, git, path, "status", "--porcelain"); err != nil {
		return err
	} else if out == "" {
		return nil
	}
	if _, err := gitOut(ctx, git, path, "add", "-A"); err != nil {
		return err
	}
	args := []string{"commit", "--quiet", "--no-verify", "-m", message}
	if _, err := gitOut(ctx, git, path, "config", "user.email"); err != nil && os.Getenv("GIT_AUTHOR_EMAIL") == "" {
		args = append([]string{"-c", "user.name=Sparrow", "-c", "user.email=sparrow@localhost"}, args...)
	}
	_, err := gitOut(ctx, git, path, args...)
	return err
}

// remove deletes the worktree and its branch.
func (w *Worktree) remove(ctx context.Context, s *session) error {
	if _, err := w.run(ctx, s.repo, "worktree", "remove", "--force", s.path); err != nil {
		return err
	}
	_, err := w.run(ctx, s.repo, "branch", "-D", s.branch)
	return err
}

func (w *Worktree) exists(ctx context.Context, repo, branch string) bool {
	_, err := w.run(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

func (w *Worktree) run(ctx context.Context, dir string, args ...string) (string, error) {
	return gitOut(ctx, w.git, dir, args...)
}

// gitOut runs git in dir and returns its trimmed stdout; a failure carries
// git's own message.
func gitOut(ctx context.Context, git, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, git, append([]string{"-C", dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %w", args[0], err)
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// mustReal resolves symlinks in p as far as possible, as git reports the
// top level resolved.
func mustReal(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

var (
	_ sandbox.Sandbox     = (*Worktree)(nil)
	_ plugin.Configurable = (*Worktree)(nil)
	_ plugin.Describer    = (*Worktree)(nil)
)

// rebase maps the paths at or below from to the same place below to and
// keeps the others as they are.
func rebase(paths []string, from, to string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if rel, err := filepath.Rel(filepath.Clean(from), p); err == nil && filepath.IsAbs(p) &&
			rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p = filepath.Join(to, rel)
		}
		out = append(out, p)
	}
	return out
}
