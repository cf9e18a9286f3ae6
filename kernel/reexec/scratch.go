package reexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/checkpoint"
	"github.com/sparrow-cli/sparrow/kernel/recorder"
)

// Scratch fills dir (empty, existing) with the workspace as the recorded
// run found it. In a git workspace dir becomes a clone sharing the
// repository's objects, HEAD detached at the recorded commit, with the
// start-of-run checkpoint (uncommitted and untracked files included) as
// its working tree; the user's repository gains nothing but is read.
// Outside git dir is a plain copy of that checkpoint.
func Scratch(ctx context.Context, store *checkpoint.Store, in recorder.Inputs, dir string) (notes []string, err error) {
	// Export resolves dir from the workspace, git clone from here: a
	// relative dir would put the files in the user's workspace.
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	state := in.StartCommit
	if state == "" {
		if in.RepoHEAD == "" {
			return nil, fmt.Errorf("run %s recorded neither a start checkpoint nor a git HEAD: its starting state is unknown", in.RunID)
		}
		state = in.RepoHEAD
		notes = append(notes, fmt.Sprintf("run %s has no start checkpoint (recorded by an older Sparrow): starting from HEAD %s, without the uncommitted changes it may have had", in.RunID, short(in.RepoHEAD)))
	}
	if !store.Shadow() {
		if err := clone(ctx, store, in.RepoHEAD, dir); err != nil {
			return notes, err
		}
	}
	if err := store.Export(ctx, state, dir); err != nil {
		if in.StartCheckpoint != "" {
			return notes, fmt.Errorf("the start checkpoint %s of run %s is gone (pruned?): %w", in.StartCheckpoint, in.RunID, err)
		}
		return notes, err
	}
	return notes, nil
}

// clone makes dir a repository that shares the workspace's objects, with
// HEAD at head (unborn when head is empty) and the index matching it.
func clone(ctx context.Context, store *checkpoint.Store, head, dir string) error {
	if err := git(ctx, "", "clone", "--quiet", "--shared", "--no-checkout", store.GitDir(), dir); err != nil {
		return err
	}
	if head == "" {
		return nil
	}
	if err := git(ctx, dir, "update-ref", "--no-deref", "HEAD", head); err != nil {
		return fmt.Errorf("the recorded HEAD %s is not in the repository any more: %w", short(head), err)
	}
	return git(ctx, dir, "read-tree", "HEAD")
}

func git(ctx context.Context, dir string, args ...string) error {
	sub := args[0]
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("git %s: %s", sub, strings.TrimSpace(stderr.String()))
		}
		return fmt.Errorf("git: %w", err)
	}
	return nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
