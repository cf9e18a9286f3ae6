package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// runFlags are `sparrow run`'s options; unset ones leave config in charge.
type runFlags struct {
	model, provider, baseURL, autonomy, mode, sandbox string
	json, yes                                         bool
	maxTurns                                          int
	budgetUSD                                         float64
}

func (a *app) runCmd() *command {
	var f runFlags
	c := &command{app: a,
		synopsis: "Run an agent on a task in this repository",
		usage:    `sparrow run [options] "TASK" (or - to read the task from stdin)`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.model, "model", "", "model name (config model block or vendor id)")
			fs.StringVar(&f.provider, "provider", "", "provider serving the model (openai, anthropic, openai-compatible, ollama, ...)")
			fs.StringVar(&f.baseURL, "base-url", "", "point the provider at another server (any OpenAI- or Anthropic-compatible API)")
			fs.StringVar(&f.autonomy, "autonomy", "", "autonomy dial 0.0-1.0, or supervised|trusted|autonomous")
			fs.StringVar(&f.mode, "mode", "", "permission mode: read-only, plan, supervised, trusted, autonomous")
			fs.StringVar(&f.sandbox, "sandbox", "", "sandbox backend for commands")
			fs.BoolVar(&f.json, "json", false, "print the event stream as NDJSON on stdout, nothing else")
			fs.BoolVar(&f.yes, "yes", false, "approve every call the gate would ask about")
			fs.IntVar(&f.maxTurns, "max-turns", 0, "stop after this many model turns (at most 60)")
			fs.Float64Var(&f.budgetUSD, "budget-usd", 0, "stop when the run has cost this much")
		}}
	c.run = func(args []string) int {
		task, code := a.readTask(args, c.usage)
		if code != 0 {
			return code
		}
		overrides, err := f.overrides()
		if err != nil {
			return a.usageError(c.usage, "%v", err)
		}
		return a.runTask(task, f, overrides)
	}
	return c
}

func (f runFlags) overrides() (config.Overrides, error) {
	var o config.Overrides
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	o.Model, o.Provider, o.BaseURL, o.Mode, o.Sandbox = str(f.model), str(f.provider), str(f.baseURL), str(f.mode), str(f.sandbox)
	if f.autonomy != "" {
		level, err := config.ParseAutonomy(f.autonomy)
		if err != nil {
			return o, fmt.Errorf("--autonomy: %w", err)
		}
		o.Autonomy = &level
	}
	if f.maxTurns != 0 {
		o.MaxTurns = &f.maxTurns
	}
	if f.budgetUSD != 0 {
		o.BudgetUSD = &f.budgetUSD
	}
	return o, nil
}

// readTask takes the task from the arguments, or from stdin for "-".
func (a *app) readTask(args []string, usage string) (string, int) {
	if len(args) == 0 {
		return "", a.usageError(usage, "no task given")
	}
	task := strings.Join(args, " ")
	if task == "-" {
		b, err := io.ReadAll(a.env.Stdin)
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: read task from stdin: %v\n", err)
			return "", ExitError
		}
		task = string(b)
	}
	if strings.TrimSpace(task) == "" {
		return "", a.usageError(usage, "the task is empty")
	}
	return strings.TrimSpace(task), 0
}

// runTask wires the kernel for one run and drives it to its end.
func (a *app) runTask(task string, f runFlags, overrides config.Overrides) int {
	res, _, err := a.execute(runSpec{task: task, json: f.json, yes: f.yes, opts: kernel.Options{Overrides: overrides}})
	return a.exitFor(res, err)
}

// runSpec is one run to execute.
type runSpec struct {
	task      string
	json, yes bool
	// opts open the kernel; the workspace defaults to -C.
	opts kernel.Options
	// approver answers the gate; nil means the usual one (--yes, a
	// terminal, or a refusal).
	approver func(r renderer) engine.Approver
	// tap sees every event, after the renderers.
	tap func(event.Event)
	// render replaces the renderer --json chooses.
	render renderer
	// drive runs the prepared engine; nil means a model run (Engine.Run).
	// A drive needs no model (`tool call`).
	drive func(ctx context.Context, e *engine.Engine) (engine.Result, error)
}

// execute prepares and drives one run, rendering it as it goes. err is
// set when the run could not be prepared or the engine failed; the
// returned directory is where the run is recorded.
func (a *app) execute(s runSpec) (engine.Result, string, error) {
	var current atomic.Pointer[engine.Engine]
	s.opts.Exec = func(ctx context.Context, token string, req sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
		e := current.Load()
		if e == nil {
			return sandbox.Exit{}, errors.New("no run is active")
		}
		return e.HostExec(ctx, token, req, io)
	}
	k, code := a.openKernel(s.opts)
	if k == nil {
		return engine.Result{}, "", &exitError{code: code}
	}
	out := a.renderer(s.json)
	if s.render != nil {
		out = s.render
	}
	approver := a.approver(s.yes, out)
	if s.approver != nil {
		approver = s.approver(out)
	}
	subscribe := out.subscribe
	if s.tap != nil {
		subscribe = func(b *bus.Bus) {
			out.subscribe(b)
			b.SubscribeSync("tap", func(e event.Event) error { s.tap(e); return nil })
		}
	}
	run, err := k.PrepareRun(a.ctx, kernel.RunOptions{Task: s.task, Approver: approver, Subscribe: subscribe, NoModel: s.drive != nil})
	if err != nil {
		return engine.Result{}, "", err
	}
	defer run.Close()
	for _, w := range run.Warnings {
		fmt.Fprintf(a.env.Stderr, "sparrow: warning: %s\n", w)
	}
	current.Store(run.Engine)
	drive := s.drive
	if drive == nil {
		drive = func(ctx context.Context, e *engine.Engine) (engine.Result, error) { return e.Run(ctx) }
	}
	res, err := drive(a.ctx, run.Engine)
	run.Close()
	out.finish(res, run.Dir)
	notices := a.env.Stdout
	if s.json || s.drive != nil {
		notices = a.env.Stderr // stdout is the event stream, or a tool's result
	}
	for _, n := range run.Notices {
		fmt.Fprintln(notices, n)
	}
	return res, run.Dir, err
}

// exitError carries an exit code already explained to the user.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exitFor maps a run's outcome to the process exit code, reporting err.
func (a *app) exitFor(res engine.Result, err error) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case err != nil && res.Status == "":
		return a.fail(err)
	case err != nil:
		fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
		return ExitError
	}
	switch res.Status {
	case event.StatusCompleted:
		return ExitOK
	case event.StatusCancelled:
		return ExitInterrupted
	default:
		return ExitError
	}
}
