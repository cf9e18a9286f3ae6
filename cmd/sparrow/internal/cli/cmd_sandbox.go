package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (a *app) sandboxListCmd() *command {
	c := &command{app: a, synopsis: "List sandbox backends and what each can enforce here", usage: "sparrow sandbox list"}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		k, code := a.openKernel(kernel.Options{})
		if k == nil {
			return code
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "SANDBOX\tPLUGIN\tAVAILABLE\tNETWORK-CONTROL\tFS-ISOLATION\tLIMITS\tREMOTE")
		for _, m := range k.Plugins.Manifests() {
			if m.Kind != plugin.KindSandbox {
				continue
			}
			for _, name := range m.Components {
				caps, err := a.capabilities(k, name)
				if err != nil {
					fmt.Fprintf(w, "%s\t%s\tno: %v\t\t\t\t\n", name, m.Name, firstLine(err))
					continue
				}
				avail := "yes"
				if !caps.Available {
					avail = "no: " + caps.UnavailableReason
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, m.Name, avail,
					yesNo(caps.NetworkControl), yesNo(caps.FilesystemIsolation), yesNo(caps.ResourceLimits), yesNo(caps.Remote))
			}
		}
		w.Flush()
		return ExitOK
	}
	return c
}

func (a *app) capabilities(k *kernel.Kernel, name string) (sandbox.Capabilities, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 15*time.Second)
	defer cancel()
	sb, err := k.Sandbox(ctx, name)
	if err != nil {
		return sandbox.Capabilities{}, err
	}
	return sb.Capabilities(ctx)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func firstLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

func (a *app) sandboxExecCmd() *command {
	var name string
	var timeout time.Duration
	c := &command{app: a,
		synopsis: "Run one command in a sandbox backend, bypassing the agent (debugging)",
		usage:    "sparrow sandbox exec [--sandbox NAME] [--timeout D] -- COMMAND [ARGS...]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&name, "sandbox", "", "sandbox backend (default: the configured sandbox)")
			fs.DurationVar(&timeout, "timeout", 0, "kill the command after this long (0: the backend's default)")
		}}
	c.run = func(argv []string) int {
		if len(argv) == 0 {
			return a.usageError(c.usage, "no command given")
		}
		k, code := a.openKernel(kernel.Options{})
		if k == nil {
			return code
		}
		if name == "" {
			name = k.Config.Sandbox
		}
		sb, err := k.Sandbox(a.ctx, name)
		if err != nil {
			return a.fail(err)
		}
		ws := a.workspace()
		sess, err := sb.Prepare(a.ctx, sandbox.PrepareRequest{RunID: "exec", Workspace: ws,
			Policy: sandbox.Policy{ReadWritePaths: []string{ws}, AllowNetwork: true}})
		if err != nil {
			return a.fail(err)
		}
		defer func() { _, _ = sb.Teardown(context.WithoutCancel(a.ctx), sess.ID) }()
		exit, err := sb.Exec(a.ctx, sandbox.ExecRequest{SessionID: sess.ID, Argv: argv, Workdir: sess.Workdir,
			Limits: sandbox.Limits{Timeout: timeout}, AllowNetwork: true},
			sandbox.IO{Stdin: a.env.Stdin, Stdout: a.env.Stdout, Stderr: a.env.Stderr})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return ExitInterrupted
			}
			return a.fail(err)
		}
		if exit.TimedOut {
			fmt.Fprintf(a.env.Stderr, "sparrow: timed out after %s; the command and its children were killed\n", timeout)
		}
		if exit.OutputTruncated {
			fmt.Fprintln(a.env.Stderr, "sparrow: output truncated at the backend's limit")
		}
		return exit.Code
	}
	return c
}
