package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// stateDir is where runs are recorded, from config.
func (a *app) stateDir() (string, int) {
	cfg, diags := config.Load(a.loadOptions())
	if diags.HasErrors() {
		a.printDiagnostics(diags)
		return "", ExitConfig
	}
	if cfg.Paths.StateDir == "" {
		fmt.Fprintln(a.env.Stderr, "sparrow: no state directory: set HOME or XDG_STATE_HOME")
		return "", ExitError
	}
	return cfg.Paths.StateDir, 0
}

func (a *app) runsListCmd() *command {
	var asJSON bool
	c := &command{app: a, synopsis: "List recorded runs, newest first", usage: "sparrow runs list [--json]",
		flags: func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON, one run a line") }}
	c.run = func([]string) int {
		state, code := a.stateDir()
		if state == "" {
			return code
		}
		runs, err := recorder.List(state)
		if err != nil && len(runs) == 0 {
			return a.fail(err)
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		if !asJSON {
			fmt.Fprintln(w, "RUN\tSTARTED\tSTATUS\tMODEL\tTURNS\tCOST\tTASK")
		}
		for _, in := range runs {
			fin := finished(state, in.RunID)
			if asJSON {
				b, _ := json.Marshal(map[string]any{"run_id": in.RunID, "started": in.Started, "task": in.Task, "model": in.Model,
					"status": fin.Status, "turns": fin.Turns, "cost_usd": fin.CostUSD, "duration_ms": fin.DurationMS})
				fmt.Fprintln(a.env.Stdout, string(b))
				continue
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t$%.4f\t%s\n", in.RunID, in.Started.Local().Format(time.DateTime), fin.Status, in.Model, fin.Turns, fin.CostUSD, clip(in.Task, 60))
		}
		w.Flush()
		return ExitOK
	}
	return c
}

// finished is a run's RunFinished, or a status saying why there is none.
func finished(state, runID string) event.RunFinished {
	run, err := recorder.Open(state, runID)
	if err != nil || run == nil || len(run.Events) == 0 {
		return event.RunFinished{Status: "unreadable"}
	}
	if f, ok := run.Events[len(run.Events)-1].Payload.(*event.RunFinished); ok {
		return *f
	}
	return event.RunFinished{Status: "unfinished"}
}

func (a *app) runsVerifyCmd() *command {
	c := &command{app: a, synopsis: "Check a recording's hash chain for tampering", usage: "sparrow runs verify RUN-ID"}
	c.run = func(args []string) int {
		if len(args) != 1 {
			return a.usageError(c.usage, "want one run id")
		}
		state, code := a.stateDir()
		if state == "" {
			return code
		}
		v, err := recorder.Verify(state, args[0])
		if err != nil {
			return a.fail(err)
		}
		if !v.OK() {
			fmt.Fprintf(a.env.Stderr, "sparrow: %s\n", v.Problem)
			return ExitError
		}
		fmt.Fprintf(a.env.Stdout, "✓ %s: %d events, chain intact, ends with RunFinished\n", args[0], v.Lines)
		return ExitOK
	}
	return c
}
