// Package cli implements sparrow's verbs on top of the kernel.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/hcl/v2"
	mcli "github.com/mitchellh/cli"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk"
)

// Tagline is printed with the version.
const Tagline = "one cli · grows with you"

// Env is everything the CLI takes from its process, so tests can run it
// in-process.
type Env struct {
	Args      []string
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	// SystemPolicyFile is the administrator's binding policy
	// (config.DefaultSystemPolicyFile); fixed at build time, never taken
	// from the environment, so a user cannot point it elsewhere.
	SystemPolicyFile string
	// ConfineInit is the executable plugins are confined with: its main
	// calls confine.Init first. Empty: plugins run unconfined.
	ConfineInit string
}

// app is one invocation.
type app struct {
	env Env
	ctx context.Context
	// global flags
	workdir  string
	config   string
	verbose  bool
	signalMu sync.Mutex
	signal   os.Signal
	kernels  []*kernel.Kernel
}

// Main runs sparrow with env and returns the exit code.
func Main(env Env) int {
	a := &app{env: env}
	ctx, stop := a.watchSignals()
	defer stop()
	a.ctx = ctx
	args, code := a.globalFlags(env.Args)
	if code >= 0 {
		return code
	}
	code = a.run(args)
	a.closeKernels()
	if sig := a.caught(); sig != nil {
		return exitForSignal(sig)
	}
	return code
}

func (a *app) run(args []string) int {
	commands := a.commands()
	if len(args) > 0 && args[0] == "help" {
		// "sparrow help plugin list" is "sparrow plugin list -h".
		args = append(args[1:len(args):len(args)], "-h")
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if msg := unknownCommand(args, commands); msg != "" {
			fmt.Fprintln(a.env.Stderr, msg)
			return ExitUsage
		}
	}
	c := &mcli.CLI{
		Name:         "sparrow",
		Version:      versionLine(),
		Args:         args,
		Commands:     commands,
		HelpFunc:     a.helpFunc,
		HelpWriter:   a.env.Stdout,
		ErrorWriter:  a.env.Stderr,
		Autocomplete: false,
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
		return ExitError
	}
	if len(args) == 0 {
		return ExitUsage
	}
	return code
}

func versionLine() string {
	return fmt.Sprintf("sparrow %s (sdk %s, plugin protocol %d) · %s", kernel.Version, sdk.Version, sdk.ProtocolVersion, Tagline)
}

// globalFlags strips -C, --config and --verbose from the front of args.
// It returns a non-negative code when the invocation is already over.
func (a *app) globalFlags(args []string) ([]string, int) {
	fs := flag.NewFlagSet("sparrow", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.workdir, "C", "", "")
	fs.StringVar(&a.config, "config", "", "")
	fs.BoolVar(&a.verbose, "verbose", false, "")
	var rest []string
	for len(args) > 0 {
		arg := args[0]
		if !strings.HasPrefix(arg, "-") || isHelpOrVersion(arg) {
			break
		}
		if err := fs.Parse(args); err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: %v\nRun 'sparrow help' for usage.\n", err)
			return nil, ExitUsage
		}
		rest = fs.Args()
		if len(rest) == len(args) {
			break
		}
		args = rest
	}
	if a.workdir != "" {
		abs, err := filepath.Abs(a.workdir)
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: -C %s: %v\n", a.workdir, err)
			return nil, ExitUsage
		}
		a.workdir = abs
	}
	return args, -1
}

func isHelpOrVersion(arg string) bool {
	return slices.Contains([]string{"-h", "-help", "--help", "-v", "-version", "--version"}, arg)
}

// workspace is -C or the current directory.
func (a *app) workspace() string {
	if a.workdir != "" {
		return a.workdir
	}
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

// openKernel opens the kernel for this invocation, printing diagnostics.
// It returns a non-zero exit code when the command cannot go on.
func (a *app) openKernel(opts kernel.Options) (*kernel.Kernel, int) {
	if opts.Workspace == "" {
		opts.Workspace = a.workspace()
	}
	opts.Getenv = a.env.Getenv
	opts.LookupEnv = a.env.LookupEnv
	opts.UserFile = a.config
	opts.SystemPolicyFile = a.env.SystemPolicyFile
	opts.ConfineInit = a.env.ConfineInit
	opts.Stderr = a.env.Stderr
	if a.verbose {
		v := true
		opts.Overrides.Verbose = &v
	}
	opts.PluginDirs = append(opts.PluginDirs, a.builtinPluginDirs()...)
	k, diags := kernel.Open(opts)
	a.printDiagnostics(diags)
	if k == nil || diags.HasErrors() {
		if k != nil {
			k.Close()
		}
		return nil, ExitConfig
	}
	a.signalMu.Lock()
	a.kernels = append(a.kernels, k)
	a.signalMu.Unlock()
	return k, 0
}

// builtinPluginDirs are $SPARROW_PLUGIN_PATH, then the plugins shipped
// beside the executable (bin/plugins after `make build`,
// PREFIX/lib/sparrow/plugins after `make install`).
func (a *app) builtinPluginDirs() []string {
	var dirs []string
	if p := a.env.Getenv("SPARROW_PLUGIN_PATH"); p != "" {
		dirs = append(dirs, filepath.SplitList(p)...)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir := filepath.Dir(exe)
		dirs = append(dirs, filepath.Join(dir, "plugins"), filepath.Join(dir, "..", "lib", "sparrow", "plugins"))
	}
	return dirs
}

func (a *app) printDiagnostics(diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	writeDiagnostics(a.env.Stderr, diags)
}

// fail prints err the way users should see it and picks the exit code.
func (a *app) fail(err error) int {
	var de *kernel.DiagnosticsError
	if errors.As(err, &de) {
		a.printDiagnostics(de.Diags)
		return ExitConfig
	}
	if a.ctx.Err() != nil {
		fmt.Fprintln(a.env.Stderr, "sparrow: interrupted; every plugin was stopped")
		return ExitInterrupted
	}
	fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
	var pe *pluginhost.Error
	var proto *pluginhost.ProtocolError
	var sdkErr *pluginhost.SDKError
	var hash *pluginhost.HashMismatchError
	if errors.As(err, &pe) || errors.As(err, &proto) || errors.As(err, &sdkErr) || errors.As(err, &hash) {
		return ExitPlugin
	}
	return ExitError
}

func (a *app) closeKernels() {
	a.signalMu.Lock()
	ks := a.kernels
	a.kernels = nil
	a.signalMu.Unlock()
	for _, k := range ks {
		k.Close()
	}
}

// watchSignals cancels the context on the first SIGINT or SIGTERM, so the
// command unwinds and stops its plugins; a second signal stops every
// plugin at once and exits.
func (a *app) watchSignals() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			a.signalMu.Lock()
			a.signal = sig
			a.signalMu.Unlock()
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			a.closeKernels()
			os.Exit(exitForSignal(sig))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

func (a *app) caught() os.Signal {
	a.signalMu.Lock()
	defer a.signalMu.Unlock()
	return a.signal
}

func exitForSignal(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return ExitTerminated
	}
	return ExitInterrupted
}

// unknownCommand returns a message for a verb sparrow does not have, with
// the nearest verb as a suggestion, or "" when args name a command.
func unknownCommand(args []string, commands map[string]mcli.CommandFactory) string {
	// Find the longest registered prefix of args.
	n := 0
	for i := 1; i <= len(args); i++ {
		if strings.HasPrefix(args[i-1], "-") {
			break
		}
		if _, ok := commands[strings.Join(args[:i], " ")]; ok {
			n = i
		}
	}
	if n == len(args) || (n > 0 && (strings.HasPrefix(args[n], "-") || !hasSubcommands(strings.Join(args[:n], " "), commands))) {
		return ""
	}
	parent := strings.Join(args[:n], " ")
	typed := strings.TrimSpace(parent + " " + args[n])
	var candidates []string
	for name := range commands {
		if parent == "" && !strings.Contains(name, " ") || parent != "" && strings.HasPrefix(name, parent+" ") && strings.Count(name, " ") == n {
			candidates = append(candidates, name)
		}
	}
	sort.Strings(candidates)
	msg := fmt.Sprintf("sparrow: unknown command %q.", typed)
	if best := config.Nearest(typed, candidates); best != "" {
		msg += fmt.Sprintf(" Did you mean %q?", "sparrow "+best)
	}
	return msg + "\nRun 'sparrow help' for the list of commands."
}

func hasSubcommands(parent string, commands map[string]mcli.CommandFactory) bool {
	for name := range commands {
		if strings.HasPrefix(name, parent+" ") {
			return true
		}
	}
	return false
}
