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
	"strings"
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
	// Protections are what the backend has in force here; [] for none.
	Protections []string `json:"protections"`
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
				row.Protections = append([]string{}, caps.Protections...)
				rows = append(rows, row)
			}
		}
		if asJSON {
			if err := writeJSON(a.env.Stdout, rows); err != nil {
				return a.fail(err)
			}
			return ExitOK
		}
		printBackends(a.env.Stdout, rows)
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

// printBackends prints the `sandbox list` table, each backend's
// protections on an indented line of their own under its row.
func printBackends(out io.Writer, rows []backendRow) {
	var table strings.Builder
	w := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
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
	lines := strings.SplitAfter(table.String(), "\n")
	fmt.Fprint(out, lines[0])
	for i, r := range rows {
		fmt.Fprint(out, lines[i+1])
		if len(r.Protections) > 0 {
			fmt.Fprintf(out, "    protections: %s\n", strings.Join(r.Protections, "; "))
		}
	}
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

// execFlags are `sandbox exec`'s policy and limit flags.
type execFlags struct {
	network                                    networkFlag
	envAllow                                   listFlag
	denyRead, denyWrite, extraRead, extraWrite repeated
	timeout                                    time.Duration
	memory, disk, maxOutput                    sizeFlag
	pids                                       countFlag
}

func (f *execFlags) declare(fs *flag.FlagSet) {
	fs.Var(&f.network, "network", "whether the command gets the network: `allow|deny` (default deny; a backend without network control cannot deny it and refuses an explicit deny)")
	fs.Var(&f.envAllow, "env-allow", "pass these host environment variables to the command: `NAMES` is one name or a comma list A,B (repeatable)")
	fs.Var(&f.denyRead, "deny-read", "the command may neither read nor write `PATH` (repeatable; relative to the workspace)")
	fs.Var(&f.denyWrite, "deny-write", "the command may read but not write `PATH` (repeatable; relative to the workspace)")
	fs.Var(&f.extraRead, "extra-read", "the command may also read `PATH` (repeatable; relative to the workspace)")
	fs.Var(&f.extraWrite, "extra-write", "the command may also write `PATH` (repeatable; relative to the workspace)")
	fs.DurationVar(&f.timeout, "timeout", 0, "kill the command and everything it started after this long, e.g. 10s (0: the backend's default)")
	fs.Var(&f.memory, "memory", "memory limit: a `SIZE` in bytes or with K, M, G or T (KiB, MiB, … too; powers of 1024), like 512K, 1024M, 2G (0: the backend's default)")
	fs.Var(&f.pids, "pids", "at most `N` processes at once (0: the backend's default)")
	fs.Var(&f.disk, "disk", "at most a `SIZE` written to disk, like 1024M (0: the backend's default)")
	fs.Var(&f.maxOutput, "max-output", "stop reading output after a `SIZE` of bytes, like 1M, and say it was truncated (0: the backend's default)")
}

// limits are the flags' resource limits.
func (f *execFlags) limits() sandbox.Limits {
	return sandbox.Limits{Timeout: f.timeout, MemoryBytes: int64(f.memory), MaxPids: int64(f.pids),
		DiskBytes: int64(f.disk), MaxOutputBytes: int64(f.maxOutput)}
}

func (a *app) sandboxExecCmd() *command {
	var (
		backend, workspace string
		f                  execFlags
	)
	c := &command{app: a,
		synopsis: "Run one command in a sandbox backend, the way a run does (debugging)",
		usage: "sparrow sandbox exec [--backend NAME] [--workspace DIR] [--network allow|deny] [--env-allow A,B]... " +
			"[--deny-read PATH]... [--deny-write PATH]... [--extra-read PATH]... [--extra-write PATH]... " +
			"[--timeout D] [--memory SIZE] [--pids N] [--disk SIZE] [--max-output SIZE] -- COMMAND [ARGS...]",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&backend, "backend", "", "sandbox backend (default: the configured sandbox)")
			fs.StringVar(&workspace, "workspace", "", "workspace directory (default: -C or the current directory)")
			f.declare(fs)
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
			AllowNetwork: f.network.allow, EnvAllow: f.envAllow,
			DenyRead: f.denyRead, DenyWrite: f.denyWrite, ExtraRead: f.extraRead, ExtraWrite: f.extraWrite})
		var (
			unavailable *kernel.SandboxUnavailableError
			badPolicy   *kernel.SandboxPolicyError
		)
		switch {
		case errors.As(err, &unavailable):
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
			return ExitUnsupported
		case errors.As(err, &badPolicy):
			return a.usageError(c.usage, "%v", err)
		case err != nil:
			return a.fail(err)
		}
		defer func() {
			if n := s.Close(context.WithoutCancel(a.ctx)); n != "" {
				fmt.Fprintln(a.env.Stderr, n)
			}
		}()
		if f.network.set && !f.network.allow && !s.Caps.NetworkControl {
			fmt.Fprintf(a.env.Stderr, "sparrow: sandbox %s cannot deny network access (--network deny); use local-hardened or docker\n", s.Backend)
			return ExitUnsupported
		}
		exit, err := s.Exec(a.ctx, sandbox.ExecRequest{Argv: argv, Limits: f.limits(), AllowNetwork: s.Policy.AllowNetwork},
			sandbox.IO{Stdin: a.env.Stdin, Stdout: a.env.Stdout, Stderr: a.env.Stderr})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return ExitInterrupted
			}
			return a.fail(err)
		}
		if exit.TimedOut {
			after := "the backend's default timeout"
			if f.timeout > 0 {
				after = f.timeout.String()
			}
			fmt.Fprintf(a.env.Stderr, "sparrow: timed out after %s; the command and its children were killed\n", after)
		}
		if exit.OutputTruncated {
			fmt.Fprintln(a.env.Stderr, "sparrow: output truncated at the backend's limit (--max-output)")
		}
		return exit.Code
	}
	return c
}
