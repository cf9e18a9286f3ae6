package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	mcli "github.com/mitchellh/cli"
)

// command adapts a small struct to mitchellh/cli.
type command struct {
	synopsis string
	usage    string
	// flags declares the command's flags on fs; nil for none.
	flags func(fs *flag.FlagSet)
	run   func(args []string) int
	app   *app
}

func (c *command) Synopsis() string { return c.synopsis }

func (c *command) Help() string {
	var b strings.Builder
	b.WriteString("Usage: " + c.usage + "\n\n  " + c.synopsis + "\n")
	if c.flags != nil {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		c.flags(fs)
		b.WriteString("\nOptions:\n\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
	}
	return b.String()
}

func (c *command) Run(args []string) int {
	fs := flag.NewFlagSet(c.usage, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.flags != nil {
		c.flags(fs)
	}
	// Flags may come before or after arguments ("replay ID --json");
	// everything after "--" is an argument.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			fmt.Fprintf(c.app.env.Stderr, "sparrow: %v\nUsage: %s\n", err, c.usage)
			return ExitUsage
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" || len(rest) == 0 {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return c.run(positional)
}

// group is a parent verb such as "plugin" that only lists its children.
type group struct {
	name     string
	synopsis string
	app      *app
}

func (g *group) Synopsis() string { return g.synopsis }
func (g *group) Help() string {
	return fmt.Sprintf("Usage: sparrow %s <command> [options]\n\n  %s", g.name, g.synopsis)
}
func (g *group) Run([]string) int { return mcli.RunResultHelp }

func (a *app) commands() map[string]mcli.CommandFactory {
	cmds := map[string]mcli.Command{
		"version":          a.versionCmd(),
		"run":              a.runCmd(),
		"rewind":           a.rewindCmd(),
		"replay":           a.replayCmd(),
		"runs":             &group{name: "runs", synopsis: "List and verify recorded runs", app: a},
		"runs list":        a.runsListCmd(),
		"runs verify":      a.runsVerifyCmd(),
		"checkpoint":       &group{name: "checkpoint", synopsis: "List and compare workspace checkpoints", app: a},
		"checkpoint list":  a.checkpointListCmd(),
		"checkpoint diff":  a.checkpointDiffCmd(),
		"checkpoint prune": a.checkpointPruneCmd(),
		"plugin":           &group{name: "plugin", synopsis: "Inspect, install and publish plugins", app: a},
		"plugin list":      a.pluginListCmd(),
		"plugin info":      a.pluginInfoCmd(),
		"plugin install":   a.pluginInstallCmd(),
		"plugin upgrade":   a.pluginUpgradeCmd(),
		"plugin remove":    a.pluginRemoveCmd(),
		"plugin verify":    a.pluginVerifyCmd(),
		"plugin keygen":    a.pluginKeygenCmd(),
		"plugin package":   a.pluginPackageCmd(),
		"plugin sign":      a.pluginSignCmd(),
		"config":           &group{name: "config", synopsis: "Show and check configuration", app: a},
		"config show":      a.configShowCmd(),
		"config validate":  a.configValidateCmd(),
		"doctor":           a.doctorCmd(),
		"sandbox":          &group{name: "sandbox", synopsis: "Reach sandbox backends directly", app: a},
		"sandbox list":     a.sandboxListCmd(),
		"sandbox exec":     a.sandboxExecCmd(),
		"tool":             &group{name: "tool", synopsis: "List tools and call one directly", app: a},
		"tool list":        a.toolListCmd(),
		"tool call":        a.toolCallCmd(),
		"worktree":         &group{name: "worktree", synopsis: "Merge or discard what runs on the worktree sandbox left", app: a},
		"worktree list":    a.worktreeListCmd(),
		"worktree merge":   a.worktreeMergeCmd(),
		"worktree discard": a.worktreeDiscardCmd(),
	}
	out := make(map[string]mcli.CommandFactory, len(cmds))
	for name, c := range cmds {
		out[name] = func() (mcli.Command, error) { return c, nil }
	}
	return out
}

func (a *app) helpFunc(cmds map[string]mcli.CommandFactory) string {
	var b strings.Builder
	b.WriteString("Usage: sparrow [-C DIR] [--config FILE] [--verbose] <command> [args]\n\n")
	b.WriteString("Sparrow runs coding agents you can trust: gated, sandboxed, reversible.\n" + Tagline + "\n\nCommands:\n")
	var names []string
	for name := range cmds {
		if !strings.Contains(name, " ") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		c, _ := cmds[n]()
		fmt.Fprintf(&b, "    %-10s %s\n", n, c.Synopsis())
	}
	b.WriteString(`
Global options:
    -C DIR         work in DIR instead of the current directory
    --config FILE  use FILE as the user configuration
    --verbose      also print logs (plugin logs included) to stderr

Run 'sparrow <command> -h' for a command's options. Exit codes: docs/exit-codes.md.
`)
	return b.String()
}

func (a *app) versionCmd() *command {
	return &command{app: a, synopsis: "Print Sparrow's version", usage: "sparrow version",
		run: func([]string) int { fmt.Fprintln(a.env.Stdout, versionLine()); return ExitOK }}
}
