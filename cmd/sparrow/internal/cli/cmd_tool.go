package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/engine"
)

func (a *app) toolListCmd() *command {
	var asJSON bool
	c := &command{app: a, synopsis: "List every tool: runtime (grpc or wasm), risk level and plugin",
		usage: "sparrow tool list [--json]",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print a JSON array with each tool's schema and description")
		}}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		k, code := a.openKernel(kernel.Options{})
		if k == nil {
			return code
		}
		entries, err := k.ToolEntries(a.ctx)
		if asJSON {
			if err := a.toolListJSON(entries); err != nil {
				return a.fail(err)
			}
		} else {
			w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tRUNTIME\tRISK\tPLUGIN\tPATH ARGUMENTS\tSTATUS")
			for _, e := range entries {
				spec := e.Tool.Spec()
				status := "enabled"
				if e.Disabled {
					status = "disabled by config"
				}
				paths := strings.Join(spec.PathArguments, ",")
				if paths == "" {
					paths = "-"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", spec.Name, e.Runtime, spec.Risk, e.Plugin, paths, status)
			}
			w.Flush()
		}
		if err != nil {
			// The tools that did load are listed; the broken plugins are
			// named on stderr.
			return a.fail(err)
		}
		return ExitOK
	}
	return c
}

// toolJSON is one tool in `tool list --json`.
type toolJSON struct {
	Name          string          `json:"name"`
	Runtime       string          `json:"runtime"`
	Risk          string          `json:"risk"`
	Plugin        string          `json:"plugin"`
	Enabled       bool            `json:"enabled"`
	PathArguments []string        `json:"path_arguments"`
	Description   string          `json:"description"`
	InputSchema   json.RawMessage `json:"input_schema"`
}

func (a *app) toolListJSON(entries []kernel.ToolEntry) error {
	out := make([]toolJSON, 0, len(entries))
	for _, e := range entries {
		spec := e.Tool.Spec()
		paths := spec.PathArguments
		if paths == nil {
			paths = []string{}
		}
		schema := spec.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage("null")
		}
		out = append(out, toolJSON{Name: spec.Name, Runtime: string(e.Runtime), Risk: string(spec.Risk), Plugin: e.Plugin,
			Enabled: !e.Disabled, PathArguments: paths, Description: spec.Description, InputSchema: schema})
	}
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (a *app) toolCallCmd() *command {
	var f runFlags
	c := &command{app: a,
		synopsis: "Call one tool directly, through the same gate, sandbox, limits and recording as a run",
		usage:    `sparrow tool call [options] NAME 'JSON-ARGUMENTS'`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.autonomy, "autonomy", "", "autonomy dial 0.0-1.0, or supervised|trusted|autonomous")
			fs.StringVar(&f.mode, "mode", "", "permission mode: read-only, plan, supervised, trusted, autonomous")
			fs.StringVar(&f.sandbox, "sandbox", "", "sandbox backend for commands the tool runs")
			fs.BoolVar(&f.json, "json", false, "print the run's event stream as NDJSON on stdout instead of the result")
			fs.BoolVar(&f.yes, "yes", false, "approve the call if the gate would ask")
		}}
	c.run = func(args []string) int {
		if len(args) < 1 || len(args) > 2 {
			return a.usageError(c.usage, "want a tool name and its JSON arguments")
		}
		name, argsJSON := args[0], "{}"
		if len(args) == 2 {
			argsJSON = args[1]
		}
		if argsJSON == "-" {
			task, code := a.readTask([]string{"-"}, c.usage)
			if code != 0 {
				return code
			}
			argsJSON = task
		}
		if !json.Valid([]byte(argsJSON)) {
			return a.usageError(c.usage, "the arguments are not valid JSON: %s", clipArg(argsJSON))
		}
		overrides, err := f.overrides()
		if err != nil {
			return a.usageError(c.usage, "%v", err)
		}
		var result string
		var isError bool
		spec := runSpec{task: "tool call " + name + " " + argsJSON, json: f.json, yes: f.yes,
			opts: kernel.Options{Overrides: overrides},
			drive: func(ctx context.Context, e *engine.Engine) (engine.Result, error) {
				res, r, err := e.CallTool(ctx, name, argsJSON)
				result, isError = res.Content, res.IsError
				return r, err
			}}
		if !f.json {
			spec.render = quietRenderer{}
		}
		res, _, err := a.execute(spec)
		if err != nil || res.Status == "" {
			return a.exitFor(res, err)
		}
		if !f.json {
			out := a.env.Stdout
			if isError {
				out = a.env.Stderr
			}
			fmt.Fprint(out, result)
			if !strings.HasSuffix(result, "\n") {
				fmt.Fprintln(out)
			}
		}
		return a.exitFor(res, nil)
	}
	return c
}

func clipArg(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// quietRenderer shows nothing while a direct tool call runs: the result
// is printed when it ends, and the run is in its recording.
type quietRenderer struct{}

func (quietRenderer) subscribe(*bus.Bus)           {}
func (quietRenderer) sync()                        {}
func (quietRenderer) finish(engine.Result, string) {}
