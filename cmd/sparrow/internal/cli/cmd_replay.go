package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/checkpoint"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/kernel/reexec"
	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/replay"
)

func (a *app) replayCmd() *command {
	var asJSON, execute bool
	var model string
	c := &command{app: a, synopsis: "Show a recorded run again, or re-execute it",
		usage: "sparrow replay RUN-ID [--json] [--execute [--model M]]",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print the events exactly as `sparrow run --json` did")
			fs.BoolVar(&execute, "execute", false, "run the task again from the recorded starting state, in a scratch copy, and report where it diverges")
			fs.StringVar(&model, "model", "", "with --execute: ask this model instead of playing the recorded answers back")
		}}
	c.run = func(args []string) int {
		if len(args) != 1 {
			return a.usageError(c.usage, "want one run id")
		}
		if model != "" && !execute {
			return a.usageError(c.usage, "--model re-executes the run; add --execute")
		}
		state, code := a.stateDir()
		if state == "" {
			return code
		}
		run, err := recorder.Open(state, args[0])
		if err != nil {
			return a.fail(err)
		}
		if run.Truncated {
			fmt.Fprintln(a.env.Stderr, "sparrow: the recording's last line was cut short; showing everything before it")
		}
		if execute {
			return a.reexecute(state, run, model, asJSON)
		}
		if asJSON {
			return a.replayJSON(run)
		}
		a.replayHuman(run)
		return ExitOK
	}
	return c
}

func (a *app) replayJSON(run *recorder.Run) int {
	w := bufio.NewWriter(a.env.Stdout)
	for _, e := range run.Events {
		e.Prev = "" // the chain belongs to the file, not the stream
		if err := event.Encode(w, e); err != nil {
			return a.fail(err)
		}
	}
	w.Flush()
	return ExitOK
}

func (a *app) replayHuman(run *recorder.Run) {
	r := &humanRenderer{out: a.env.Stdout, errw: a.env.Stderr, color: colorOK(a.env.Stdout, a.env.Getenv), calls: map[string]string{}}
	var res engine.Result
	for _, e := range run.Events {
		r.show(e)
		if f, ok := e.Payload.(*event.RunFinished); ok {
			res = engine.Result{Status: f.Status, Reason: f.Reason, Turns: f.Turns, InputTokens: f.InputTokens,
				OutputTokens: f.OutputTokens, CostUSD: f.CostUSD, FilesChanged: f.FilesChanged, Duration: time.Duration(f.DurationMS) * time.Millisecond}
		}
	}
	r.endText()
	if res.Status == "" {
		fmt.Fprintln(a.env.Stdout, "⚠ the recording ends here: the run was cut short (killed or crashed) before it finished")
		return
	}
	r.printSummary(res, run.Dir)
}

// reexecute runs a recorded task again in a scratch copy of the state it
// started from, with the recorded model answers (or another model), and
// reports the first step where the new run parts from the recording.
func (a *app) reexecute(state string, run *recorder.Run, model string, asJSON bool) int {
	in := run.Inputs
	var started *event.RunStarted
	for _, e := range run.Events {
		if p, ok := e.Payload.(*event.RunStarted); ok {
			started = p
			break
		}
	}
	if started == nil {
		fmt.Fprintf(a.env.Stderr, "sparrow: run %s has no RunStarted event: nothing to re-execute\n", in.RunID)
		return ExitError
	}
	if _, err := os.Stat(in.Workspace); err != nil {
		fmt.Fprintf(a.env.Stderr, "sparrow: the workspace of run %s is gone: %v\n", in.RunID, err)
		return ExitError
	}
	store, err := checkpoint.Open(a.ctx, in.Workspace, state, checkpoint.Options{})
	if err != nil {
		return a.fail(err)
	}
	scratch, err := os.MkdirTemp("", "sparrow-replay-"+in.RunID+"-")
	if err != nil {
		return a.fail(err)
	}
	ws := filepath.Join(scratch, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return a.fail(err)
	}
	notes, err := reexec.Scratch(a.ctx, store, in, ws)
	for _, n := range notes {
		fmt.Fprintf(a.env.Stderr, "sparrow: %s\n", n)
	}
	if err != nil {
		os.RemoveAll(scratch)
		return a.fail(err)
	}
	info := a.env.Stderr
	if !asJSON {
		info = a.env.Stdout
	}
	fmt.Fprintf(info, "⚓ re-executing %s in %s\n", in.RunID, ws)

	o := config.Overrides{Autonomy: &started.Autonomy}
	if in.Sandbox != "" {
		o.Sandbox = &in.Sandbox
	}
	if started.Mode != "" {
		o.Mode = &started.Mode
	}
	if started.MaxTurns > 0 {
		o.MaxTurns = &started.MaxTurns
	}
	spec := runSpec{task: started.Task, json: asJSON, opts: kernel.Options{Workspace: ws, Overrides: o}}
	if model == "" {
		conv := replay.FromEvents(in.Model, run.Events)
		path := filepath.Join(scratch, "conversation.json")
		if err := conv.Write(path); err != nil {
			return a.fail(err)
		}
		replayName := "replay"
		o.Provider, o.Model = &replayName, &replayName
		spec.opts.Overrides = o
		spec.opts.Settings = map[string]map[string]any{"provider.replay": {"file": path}}
		spec.approver = func(renderer) engine.Approver { return recordedApprovals(run.Events) }
	} else {
		// Another model proposes other calls: the user answers, as in a run.
		o.Model = &model
		spec.opts.Overrides = o
	}
	var mu sync.Mutex
	var fresh []event.Event
	var freshRun string
	spec.tap = func(e event.Event) {
		mu.Lock()
		fresh = append(fresh, e)
		freshRun = e.RunID
		mu.Unlock()
	}
	_, _, err = a.execute(spec)
	if err != nil && len(fresh) == 0 {
		return a.exitFor(engine.Result{}, err)
	}
	mu.Lock()
	defer mu.Unlock()
	rewrite := reexec.Replacer(ws, in.Workspace, freshRun, in.RunID)
	d := reexec.Compare(reexec.Steps(run.Events, nil), reexec.Steps(fresh, rewrite))
	if d == nil {
		fmt.Fprintf(info, "✓ the re-execution matches the recording, step for step (%d steps)\n", len(reexec.Steps(run.Events, nil)))
		return ExitOK
	}
	show := func(s *reexec.Step) string {
		if s == nil {
			return "(the run had ended)"
		}
		return s.String()
	}
	fmt.Fprintf(a.env.Stderr, "✗ the re-execution diverges from the recording at step %d:\n  recorded: %s\n  this run: %s\n",
		d.Index+1, show(d.Recorded), show(d.Fresh))
	return ExitError
}

// replayApprover answers the gate as the recording did, by call id: the
// played-back answers carry the recorded ids. A call the recording never
// answered is refused.
type replayApprover map[string]bool

func recordedApprovals(events []event.Event) replayApprover {
	r := replayApprover{}
	for _, e := range events {
		if p, ok := e.Payload.(*event.ApprovalResolved); ok {
			r[p.CallID] = p.Approved
		}
	}
	return r
}

func (r replayApprover) Approve(_ context.Context, req engine.ApprovalRequest) (engine.Approval, error) {
	if ok, found := r[req.CallID]; found {
		return engine.Approval{Approved: ok, By: "recording"}, nil
	}
	return engine.Approval{By: "recording", Reason: "the recording never answered this call"}, nil
}
