package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// writeJSON prints v indented, the way every --json listing does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// backendRow is one line of `sandbox list`.
type backendRow struct {
	Name      string `json:"name"`
	Plugin    string `json:"plugin"`
	Available bool   `json:"available"`
	// Reason says why the backend cannot run here, and the fix.
	Reason              string `json:"reason,omitempty"`
	NetworkControl      bool   `json:"network_control"`
	FilesystemIsolation bool   `json:"filesystem_isolation"`
	ResourceLimits      bool   `json:"resource_limits"`
	PersistentWorkspace bool   `json:"persistent_workspace"`
	Remote              bool   `json:"remote"`
	Configured          bool   `json:"configured"`
}

func (a *app) sandboxListCmd() *command {
	var asJSON bool
	c := &command{app: a, synopsis: "List sandbox backends, what each enforces here, and why one cannot run",
		usage: "sparrow sandbox list [--json]",
		flags: func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") }}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		k, code := a.openKernel(kernel.Options{})
		if k == nil {
			return code
		}
		var rows []backendRow
		for _, m := range k.Plugins.Manifests() {
			if m.Kind != plugin.KindSandbox {
				continue
			}
			for _, name := range m.Components {
				row := backendRow{Name: name, Plugin: m.Name, Configured: name == k.Config.Sandbox}
				caps, err := a.capabilities(k, name)
				switch {
				case err != nil:
					row.Reason = firstLine(err)
				case !caps.Available:
					row.Reason = caps.UnavailableReason
				default:
					row.Available = true
				}
				row.NetworkControl, row.FilesystemIsolation, row.ResourceLimits = caps.NetworkControl, caps.FilesystemIsolation, caps.ResourceLimits
				row.PersistentWorkspace, row.Remote = caps.PersistentWorkspace, caps.Remote
				rows = append(rows, row)
			}
		}
		if asJSON {
			if err := writeJSON(a.env.Stdout, rows); err != nil {
				return a.fail(err)
			}
			return ExitOK
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "SANDBOX\tPLUGIN\tAVAILABLE\tNETWORK-CONTROL\tFS-ISOLATION\tLIMITS\tPERSISTENT\tREMOTE")
		for _, r := range rows {
			name := r.Name
			if r.Configured {
				name += " *"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, r.Plugin, yesNo(r.Available),
				yesNo(r.NetworkControl), yesNo(r.FilesystemIsolation), yesNo(r.ResourceLimits), yesNo(r.PersistentWorkspace), yesNo(r.Remote))
		}
		w.Flush()
		fmt.Fprintf(a.env.Stdout, "\n* configured (sandbox = %q)\n", k.Config.Sandbox)
		for _, r := range rows {
			if !r.Available {
				fmt.Fprintf(a.env.Stdout, "%s unavailable: %s\n", r.Name, r.Reason)
			}
		}
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
	var (
		backend, workspace string
		allowNetwork       bool
		envAllow           repeated
		timeout            time.Duration
	)
	c := &command{app: a,
		synopsis: "Run one command in a sandbox backend, the way a run does (debugging)",
		usage:    "sparrow sandbox exec [--backend NAME] [--workspace DIR] [--allow-network] [--env-allow NAME]... [--timeout D] -- COMMAND [ARGS...]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&backend, "backend", "", "sandbox backend (default: the configured sandbox)")
			fs.StringVar(&workspace, "workspace", "", "workspace directory (default: -C or the current directory)")
			fs.BoolVar(&allowNetwork, "allow-network", false, "let the command use the network (backends with network control deny it otherwise)")
			fs.Var(&envAllow, "env-allow", "pass this host environment variable to the command (repeatable)")
			fs.DurationVar(&timeout, "timeout", 0, "kill the command after this long (0: the backend's default)")
		}}
	c.run = func(argv []string) int {
		if len(argv) == 0 {
			return a.usageError(c.usage, "no command given")
		}
		ws := a.workspace()
		if workspace != "" {
			abs, err := filepath.Abs(workspace)
			if err != nil {
				return a.fail(err)
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return a.usageError(c.usage, "--workspace %s is not a directory", workspace)
			}
			ws = abs
		}
		k, code := a.openKernel(kernel.Options{Workspace: ws})
		if k == nil {
			return code
		}
		s, err := k.OpenSandbox(a.ctx, kernel.SandboxOptions{Backend: backend, RunID: "exec-" + time.Now().Format("20060102-150405"), Workspace: ws,
			AllowNetwork: allowNetwork, EnvAllow: envAllow})
		var unavailable *kernel.SandboxUnavailableError
		if errors.As(err, &unavailable) {
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
			return ExitUnsupported
		}
		if err != nil {
			return a.fail(err)
		}
		defer func() {
			if n := s.Close(context.WithoutCancel(a.ctx)); n != "" {
				fmt.Fprintln(a.env.Stderr, n)
			}
		}()
		exit, err := s.Exec(a.ctx, sandbox.ExecRequest{Argv: argv, Limits: sandbox.Limits{Timeout: timeout},
			AllowNetwork: s.Policy.AllowNetwork},
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
