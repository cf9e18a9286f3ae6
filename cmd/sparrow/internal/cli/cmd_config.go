package cli

import (
	"fmt"

	"github.com/sparrow-cli/sparrow/kernel/config"
)

func (a *app) loadOptions() config.LoadOptions {
	opts := config.LoadOptions{Workspace: a.workspace(), Getenv: a.env.Getenv, UserFile: a.config, SystemPolicyFile: a.env.SystemPolicyFile}
	if a.verbose {
		v := true
		opts.Overrides.Verbose = &v
	}
	return opts
}

func (a *app) configShowCmd() *command {
	c := &command{app: a, synopsis: "Print the merged configuration and where each value came from", usage: "sparrow config show"}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		cfg, diags := config.Load(a.loadOptions())
		a.printDiagnostics(diags)
		if err := cfg.Show(a.env.Stdout); err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
			return ExitError
		}
		if diags.HasErrors() {
			return ExitConfig
		}
		return ExitOK
	}
	return c
}

func (a *app) configValidateCmd() *command {
	c := &command{app: a, synopsis: "Check configuration files; every problem with file:line:col", usage: "sparrow config validate [FILE]"}
	c.run = func(args []string) int {
		switch len(args) {
		case 0:
			cfg, diags := config.Load(a.loadOptions())
			a.printDiagnostics(diags)
			if diags.HasErrors() {
				return ExitConfig
			}
			for _, f := range []string{cfg.Paths.UserFile, cfg.Paths.ProjectFile} {
				if f != "" && fileExists(f) {
					fmt.Fprintf(a.env.Stdout, "✓ %s\n", f)
				}
			}
			fmt.Fprintln(a.env.Stdout, "Configuration is valid; shipshape.")
			return ExitOK
		case 1:
			diags := config.ValidateFile(args[0])
			a.printDiagnostics(diags)
			if diags.HasErrors() {
				return ExitConfig
			}
			fmt.Fprintf(a.env.Stdout, "✓ %s is valid\n", args[0])
			return ExitOK
		default:
			return a.usageError(c.usage, "want at most one file")
		}
	}
	return c
}
