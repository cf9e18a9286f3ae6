// Package worktrees finds, merges and discards the git worktrees the
// worktree sandbox backend leaves: each run's changes on a branch
// sparrow/<run-id>, checked out under <state>/worktrees/ (the layout is
// documented in docs/sandboxes.md).
package worktrees

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BranchPrefix starts every branch the worktree backend creates.
const BranchPrefix = "sparrow/"

// Worktree is one run's branch and, while it is kept, its checkout.
type Worktree struct {
	// Run is the branch name without the prefix.
	Run    string `json:"run"`
	Branch string `json:"branch"`
	// Path is the checkout; empty when only the branch is left.
	Path string `json:"path,omitempty"`
	// Changes summarise the branch against the repository's HEAD
	// ("2 files changed, 3 insertions(+)"), "" when there are none.
	Changes string `json:"changes"`
	// Uncommitted is set when the checkout has changes not yet on the
	// branch (a run cut short); merge commits them first.
	Uncommitted bool `json:"uncommitted"`
}

// Repo is the user's repository.
type Repo struct {
	// Top is the repository's top level.
	Top string
	// StateDir is Sparrow's state directory.
	StateDir string
}

// Open finds the repository holding dir.
func Open(ctx context.Context, dir, stateDir string) (*Repo, error) {
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not inside a git repository", dir)
	}
	return &Repo{Top: top, StateDir: stateDir}, nil
}

// List returns the repository's Sparrow worktrees and branches.
func (r *Repo) List(ctx context.Context) ([]Worktree, error) {
	out, err := git(ctx, r.Top, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+BranchPrefix)
	if err != nil {
		return nil, err
	}
	paths, err := r.checkouts(ctx)
	if err != nil {
		return nil, err
	}
	var list []Worktree
	for _, branch := range strings.Fields(out) {
		w := Worktree{Run: strings.TrimPrefix(branch, BranchPrefix), Branch: branch, Path: paths[branch]}
		if w.Changes, err = git(ctx, r.Top, "diff", "--shortstat", "HEAD..."+branch); err != nil {
			return nil, err
		}
		if w.Path != "" {
			st, err := git(ctx, w.Path, "status", "--porcelain")
			w.Uncommitted = err == nil && st != ""
		}
		list = append(list, w)
	}
	return list, nil
}

// checkouts maps branch names to their worktree paths under the state
// directory.
func (r *Repo) checkouts(ctx context.Context) (map[string]string, error) {
	out, err := git(ctx, r.Top, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	root := filepath.Join(r.StateDir, "worktrees") + string(filepath.Separator)
	if real, err := filepath.EvalSymlinks(filepath.Join(r.StateDir, "worktrees")); err == nil {
		root = real + string(filepath.Separator)
	}
	paths := map[string]string{}
	var path string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			path = strings.TrimPrefix(line, "worktree ")
		case strings.HasPrefix(line, "branch refs/heads/"+BranchPrefix) && strings.HasPrefix(path, root):
			paths[strings.TrimPrefix(line, "branch refs/heads/")] = path
		}
	}
	return paths, nil
}

// Find returns the run's worktree.
func (r *Repo) Find(ctx context.Context, run string) (Worktree, error) {
	run = strings.TrimPrefix(run, BranchPrefix)
	list, err := r.List(ctx)
	if err != nil {
		return Worktree{}, err
	}
	var names []string
	for _, w := range list {
		if w.Run == run {
			return w, nil
		}
		names = append(names, w.Run)
	}
	if len(names) == 0 {
		return Worktree{}, fmt.Errorf("no Sparrow worktree %q in %s; there are none", run, r.Top)
	}
	return Worktree{}, fmt.Errorf("no Sparrow worktree %q in %s; there are: %s", run, r.Top, strings.Join(names, ", "))
}

// ErrConflict is a merge git could not finish; the repository is left
// mid-merge for the user to resolve or abort.
var ErrConflict = errors.New("the merge stopped on conflicts")

// Merge merges the run's branch into the checked-out branch (a merge
// commit, so the run stays one unit in history), committing what the
// run left uncommitted first, then removes the worktree and the branch.
// Git refuses to merge over uncommitted changes of the user's that the
// merge would touch; its message is returned.
func (r *Repo) Merge(ctx context.Context, w Worktree) (string, error) {
	if w.Path != "" && w.Uncommitted {
		if err := commit(ctx, w.Path, "sparrow: uncommitted changes of run "+w.Run); err != nil {
			return "", err
		}
	}
	out, err := gitCombined(ctx, r.Top, "merge", "--no-ff", "--no-edit", "-m", "Merge Sparrow run "+w.Run, w.Branch)
	if err != nil {
		if st, _ := git(ctx, r.Top, "diff", "--name-only", "--diff-filter=U"); st != "" {
			return out, fmt.Errorf("%w in %s: resolve them and commit, or `git merge --abort`; the worktree is kept", ErrConflict, strings.Join(strings.Fields(st), ", "))
		}
		return out, fmt.Errorf("git merge %s: %s", w.Branch, out)
	}
	return out, r.Discard(ctx, w)
}

// Discard removes the worktree and deletes the branch, changes and all.
func (r *Repo) Discard(ctx context.Context, w Worktree) error {
	if w.Path != "" {
		if _, err := git(ctx, r.Top, "worktree", "remove", "--force", w.Path); err != nil {
			return err
		}
	}
	_, err := git(ctx, r.Top, "branch", "-D", w.Branch)
	return err
}

// commit commits everything in the checkout at path. Without a configured
// identity it commits as Sparrow.
func commit(ctx context.Context, path, message string) error {
	if _, err := git(ctx, path, "add", "-A"); err != nil {
		return err
	}
	args := []string{"commit", "--quiet", "--no-verify", "-m", message}
	if _, err := git(ctx, path, "config", "user.email"); err != nil && os.Getenv("GIT_AUTHOR_EMAIL") == "" {
		args = append([]string{"-c", "user.name=Sparrow", "-c", "user.email=sparrow@localhost"}, args...)
	}
	_, err := git(ctx, path, args...)
	return err
}

// git runs git in dir and returns its trimmed stdout; a failure carries
// git's message.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// gitCombined runs git with stdout and stderr together, for messages
// shown to the user as git wrote them.
func gitCombined(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
