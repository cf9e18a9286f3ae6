package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"

	"flag"
	"fmt"
	"golang.org/x/term"
	"text/tabwriter"
	"time"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/checkpoint"
)

func (a *app) checkpointListCmd() *command {
	var run string
	var asJSON bool
	c := &command{app: a, synopsis: "List the workspace's checkpoints, newest first", usage: "sparrow checkpoint list [--run ID] [--json]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&run, "run", "", "only the checkpoints of this run")
			fs.BoolVar(&asJSON, "json", false, "print JSON, one checkpoint a line")
		}}
	c.run = func(args []string) int {
		store, code := a.checkpointStore()
		if store == nil {
			return code
		}
		all, err := store.List(a.ctx)
		if err != nil {
			return a.fail(err)
		}
		stats, err := store.Stats(a.ctx)
		if err != nil {
			return a.fail(err)
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		if !asJSON {
			fmt.Fprintln(w, "ID\tTIME\tTURN\tTOOL\tCHANGED AFTER\tSUMMARY")
		}
		for _, cp := range all {
			if run != "" && cp.Meta.RunID != run {
				continue
			}
			st, hasStat := stats[cp.Commit]
			if asJSON {
				m := map[string]any{"id": cp.ID, "ref": cp.Ref, "commit": cp.Commit, "time": cp.Time.UTC(),
					"run": cp.Meta.RunID, "turn": cp.Meta.Turn, "tool": cp.Meta.Tool, "summary": cp.Meta.Summary}
				if hasStat {
					m["files_changed"], m["lines_added"], m["lines_deleted"] = st.Files, st.Added, st.Deleted
				}
				if len(cp.Meta.Skipped) > 0 {
					m["skipped"] = cp.Meta.Skipped
				}
				b, _ := json.Marshal(m)
				fmt.Fprintln(a.env.Stdout, string(b))
				continue
			}
			changed := "-"
			if hasStat {
				changed = st.String()
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", cp.ID, cp.Time.Local().Format(time.DateTime), cp.Meta.Turn, or(cp.Meta.Tool, "-"), changed, cp.Meta.Summary)
		}
		w.Flush()
		return ExitOK
	}
	return c
}

func (a *app) checkpointDiffCmd() *command {
	c := &command{app: a, synopsis: "Show what changed since a checkpoint (or between two)", usage: "sparrow checkpoint diff ID [ID2]"}
	c.run = func(args []string) int {
		if len(args) < 1 || len(args) > 2 {
			return a.usageError(c.usage, "want one or two checkpoint ids")
		}
		store, code := a.checkpointStore()
		if store == nil {
			return code
		}
		from, err := store.Find(a.ctx, args[0])
		if err != nil {
			return a.fail(err)
		}
		var to checkpoint.Checkpoint
		if len(args) == 2 {
			if to, err = store.Find(a.ctx, args[1]); err != nil {
				return a.fail(err)
			}
		} else if to, err = store.Current(a.ctx); err != nil {
			return a.fail(err)
		}
		diff, err := store.Diff(a.ctx, from, to)
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintln(a.env.Stdout, diff)
		return ExitOK
	}
	return c
}

func (a *app) rewindCmd() *command {
	var force bool
	c := &command{app: a, synopsis: "Restore the workspace to a checkpoint (undoable)", usage: "sparrow rewind [--force] [ID | N]",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&force, "force", false, "rewind even over changes Sparrow did not make")
		}}
	c.run = func(args []string) int {
		if len(args) > 1 {
			return a.usageError(c.usage, "want at most one checkpoint id or count")
		}
		store, code := a.checkpointStore()
		if store == nil {
			return code
		}
		target := ""
		if len(args) == 1 {
			target = args[0]
		}
		cp, err := store.Find(a.ctx, target)
		if err != nil {
			return a.fail(err)
		}
		if code := a.confirmForeignChanges(store, force); code != 0 {
			return code
		}
		before, err := store.Restore(a.ctx, cp, "rewind")
		if err != nil {
			return a.fail(err)
		}
		changes, _ := store.Changes(a.ctx, cp, before)
		fmt.Fprintf(a.env.Stdout, "Rewound to %s (%s). %d file(s) restored.\n", cp.ID, cp.Meta.Summary, len(changes))
		for _, ch := range changes {
			fmt.Fprintf(a.env.Stdout, "  %s\n", ch)
		}
		fmt.Fprintf(a.env.Stdout, "Changed your mind? `sparrow rewind %s` puts it back.\n", before.ID)
		return ExitOK
	}
	return c
}

func (a *app) checkpointStore() (*checkpoint.Store, int) {
	k, code := a.openKernel(kernel.Options{})
	if k == nil {
		return nil, code
	}
	store, err := k.Checkpoints(a.ctx)
	if err != nil {
		return nil, a.fail(err)
	}
	return store, 0
}

// confirmForeignChanges protects edits Sparrow did not make: files that
// differ from the last state Sparrow recorded. It asks on a terminal and
// refuses without one, unless --force.
func (a *app) confirmForeignChanges(store *checkpoint.Store, force bool) int {
	all, err := store.List(a.ctx)
	if err != nil || len(all) == 0 || force {
		return 0
	}
	dirty, err := store.Dirty(a.ctx, all[0])
	if err != nil || len(dirty) == 0 {
		return 0
	}
	fmt.Fprintf(a.env.Stderr, "These files changed since Sparrow last touched the workspace (%s):\n", all[0].ID)
	if last := all[0].Meta; strings.HasPrefix(last.Summary, "before ") {
		// No end-of-run snapshot after a batch: the run was cut short
		// (killed, crashed) or is still going, and the changes may be its.
		fmt.Fprintf(a.env.Stderr, "(run %s never recorded its end after %q: if it was killed, these may be its own changes)\n", last.RunID, last.Summary)
	}
	for _, d := range dirty {
		fmt.Fprintf(a.env.Stderr, "  %s\n", d)
	}
	if !a.stdinIsTerminal() {
		fmt.Fprintln(a.env.Stderr, "sparrow: rewinding would overwrite them; rerun with --force to do it anyway (the rewind itself stays undoable)")
		return ExitError
	}
	fmt.Fprint(a.env.Stderr, "Rewind anyway? (the rewind itself stays undoable) [y/N] ")
	line, _ := bufio.NewReader(a.env.Stdin).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		fmt.Fprintln(a.env.Stderr, "Nothing changed.")
		return ExitError
	}
	return 0
}

func (a *app) stdinIsTerminal() bool {
	f, ok := a.env.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) checkpointPruneCmd() *command {
	var olderThan time.Duration
	c := &command{app: a, synopsis: "Delete old checkpoints", usage: "sparrow checkpoint prune [--older-than DURATION]",
		flags: func(fs *flag.FlagSet) {
			fs.DurationVar(&olderThan, "older-than", 30*24*time.Hour, "delete checkpoints older than this")
		}}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		store, code := a.checkpointStore()
		if store == nil {
			return code
		}
		n, err := store.Prune(a.ctx, time.Now().Add(-olderThan))
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.env.Stdout, "Pruned %d checkpoint(s) older than %s.\n", n, olderThan)
		return ExitOK
	}
	return c
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
