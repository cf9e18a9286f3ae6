package cli

import (
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/sparrow-cli/sparrow/cmd/sparrow/internal/worktrees"
)

// openWorktrees opens the workspace's repository for the worktree verbs.
func (a *app) openWorktrees() (*worktrees.Repo, int) {
	state, code := a.stateDir()
	if state == "" {
		return nil, code
	}
	r, err := worktrees.Open(a.ctx, a.workspace(), state)
	if err != nil {
		return nil, a.fail(err)
	}
	return r, ExitOK
}

func (a *app) worktreeListCmd() *command {
	var asJSON bool
	c := &command{app: a, synopsis: "List the branches and worktrees runs on the worktree sandbox left",
		usage: "sparrow worktree list [--json]",
		flags: func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") }}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		r, code := a.openWorktrees()
		if r == nil {
			return code
		}
		list, err := r.List(a.ctx)
		if err != nil {
			return a.fail(err)
		}
		if asJSON {
			if list == nil {
				list = []worktrees.Worktree{}
			}
			if err := writeJSON(a.env.Stdout, list); err != nil {
				return a.fail(err)
			}
			return ExitOK
		}
		if len(list) == 0 {
			fmt.Fprintln(a.env.Stdout, "No Sparrow worktrees here; runs with sandbox = \"worktree\" leave them.")
			return ExitOK
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "RUN\tBRANCH\tCHANGES\tWORKTREE")
		for _, t := range list {
			changes := t.Changes
			if changes == "" {
				changes = "none"
			}
			if t.Uncommitted {
				changes += " (+ uncommitted)"
			}
			path := t.Path
			if path == "" {
				path = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Run, t.Branch, changes, path)
		}
		w.Flush()
		return ExitOK
	}
	return c
}

func (a *app) worktreeMergeCmd() *command {
	c := &command{app: a, synopsis: "Merge a run's branch into the current branch, then remove its worktree",
		usage: "sparrow worktree merge RUN"}
	c.run = func(args []string) int {
		if len(args) != 1 {
			return a.usageError(c.usage, "want exactly one run")
		}
		r, code := a.openWorktrees()
		if r == nil {
			return code
		}
		t, err := r.Find(a.ctx, args[0])
		if err != nil {
			return a.fail(err)
		}
		out, err := r.Merge(a.ctx, t)
		if out != "" {
			fmt.Fprintln(a.env.Stdout, out)
		}
		if errors.Is(err, worktrees.ErrConflict) {
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
			return ExitError
		}
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.env.Stdout, "Merged %s; its worktree and branch are gone.\n", t.Branch)
		return ExitOK
	}
	return c
}

func (a *app) worktreeDiscardCmd() *command {
	c := &command{app: a, synopsis: "Delete a run's worktree and branch, changes and all",
		usage: "sparrow worktree discard RUN"}
	c.run = func(args []string) int {
		if len(args) != 1 {
			return a.usageError(c.usage, "want exactly one run")
		}
		r, code := a.openWorktrees()
		if r == nil {
			return code
		}
		t, err := r.Find(a.ctx, args[0])
		if err != nil {
			return a.fail(err)
		}
		if err := r.Discard(a.ctx, t); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.env.Stdout, "Discarded %s; overboard it goes.\n", t.Branch)
		return ExitOK
	}
	return c
}
