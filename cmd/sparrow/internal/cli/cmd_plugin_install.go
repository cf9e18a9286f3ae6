package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/pluginstall"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// The user's verbs for installed plugins: install, upgrade, remove, verify
// (docs/plugin-distribution.md).

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// installFlags are the flags install and upgrade share.
type installFlags struct {
	mirrors                repeated
	trustKey, acceptNewKey string
}

func (f *installFlags) declare(fs *flag.FlagSet) {
	fs.Var(&f.mirrors, "mirror", "a mirror URL or directory to try first (repeatable; then plugin_mirrors from config)")
	fs.StringVar(&f.trustKey, "trust-key", "", "trust this publisher key (ed25519:… or @FILE) for this install, on top of policy.trusted_keys")
	fs.StringVar(&f.acceptNewKey, "accept-new-key", "", "accept a release signed by this key although the lock file records another signer")
}

// installOptions builds the installer's options from config and flags.
func (a *app) installOptions(f installFlags) (pluginstall.Options, *config.Config, int) {
	cfg, diags := config.Load(a.loadOptions())
	a.printDiagnostics(diags)
	if diags.HasErrors() {
		return pluginstall.Options{}, nil, ExitConfig
	}
	opts := pluginstall.Options{DataDir: cfg.Paths.DataDir, LockFile: kernel.LockFilePath(cfg.Paths)}
	for _, m := range append(append([]string{}, f.mirrors...), cfg.PluginMirrors...) {
		src, err := pluginstall.ParseSource(m)
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: mirror %q: %v\n", m, err)
			return opts, nil, ExitUsage
		}
		opts.Sources = append(opts.Sources, src)
	}
	ring, err := plugintrust.ParseKeyRing(cfg.Policy.TrustedKeys)
	if err != nil {
		fmt.Fprintf(a.env.Stderr, "sparrow: policy.trusted_keys: %v\n", err)
		return opts, nil, ExitConfig
	}
	opts.TrustedKeys = ring
	for _, k := range []struct {
		flag, val string
		dst       *plugintrust.PublicKey
	}{{"--trust-key", f.trustKey, &opts.TrustKey}, {"--accept-new-key", f.acceptNewKey, &opts.AcceptNewKey}} {
		if k.val == "" {
			continue
		}
		key, err := readKeyArg(k.val)
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "sparrow: %s: %v\n", k.flag, err)
			return opts, nil, ExitUsage
		}
		if k.flag == "--trust-key" && cfg.Policy.System != "" && len(cfg.Policy.TrustedKeys) > 0 {
			fmt.Fprintf(a.env.Stderr, "sparrow: --trust-key refused: the system policy %s decides which keys are trusted\n", cfg.Policy.System)
			return opts, nil, ExitError
		}
		*k.dst = key
	}
	return opts, cfg, 0
}

// readKeyArg reads a public key given inline or as @FILE.
func readKeyArg(v string) (plugintrust.PublicKey, error) {
	if path, ok := strings.CutPrefix(v, "@"); ok {
		data, err := os.ReadFile(path)
		if err != nil {
			return plugintrust.PublicKey{}, err
		}
		v = string(data)
	}
	return plugintrust.ParsePublicKey(v)
}

func (a *app) pluginInstallCmd() *command {
	var f installFlags
	c := &command{app: a, synopsis: "Install a plugin from a mirror (or everything the lock file lists)",
		usage: "sparrow plugin install [NAME[@CONSTRAINT]] [--mirror URL|DIR]... [--trust-key KEY] [--accept-new-key KEY]",
		flags: f.declare}
	c.run = func(args []string) int {
		if len(args) > 1 {
			return a.usageError(c.usage, "want at most one plugin")
		}
		opts, _, code := a.installOptions(f)
		if code != 0 {
			return code
		}
		if len(args) == 0 {
			results, err := pluginstall.InstallLocked(a.ctx, opts)
			for _, r := range results {
				a.printInstalled(r, opts.LockFile)
			}
			if err != nil {
				return a.installFailed(err)
			}
			if len(results) == 0 {
				fmt.Fprintf(a.env.Stdout, "The lock file %s lists no plugins; nothing to install.\n", opts.LockFile)
			}
			return ExitOK
		}
		name, constraint, _ := strings.Cut(args[0], "@")
		if len(opts.Sources) == 0 {
			fmt.Fprintf(a.env.Stderr, "sparrow: no mirror to install %s from: pass --mirror URL|DIR or set plugin_mirrors in config\n", name)
			return ExitUsage
		}
		r, err := pluginstall.Install(a.ctx, opts, name, constraint)
		if err != nil {
			return a.installFailed(err)
		}
		a.printInstalled(*r, opts.LockFile)
		return ExitOK
	}
	return c
}

func (a *app) pluginUpgradeCmd() *command {
	var f installFlags
	c := &command{app: a, synopsis: "Upgrade installed plugins within their locked constraints",
		usage: "sparrow plugin upgrade [NAME] [--mirror URL|DIR]... [--trust-key KEY] [--accept-new-key KEY]", flags: f.declare}
	c.run = func(args []string) int {
		if len(args) > 1 {
			return a.usageError(c.usage, "want at most one plugin")
		}
		opts, _, code := a.installOptions(f)
		if code != 0 {
			return code
		}
		names := args
		if len(names) == 0 {
			all, err := pluginstall.Installed(opts.DataDir, opts.LockFile)
			if err != nil {
				return a.installFailed(err)
			}
			for _, in := range all {
				if in.Locked != "" {
					names = append(names, in.Name)
				}
			}
		}
		failed := false
		for _, n := range names {
			r, err := pluginstall.Upgrade(a.ctx, opts, n)
			if err != nil {
				a.installFailed(fmt.Errorf("upgrade %s: %w", n, err))
				failed = true
				continue
			}
			a.printInstalled(*r, opts.LockFile)
		}
		if failed {
			return ExitError
		}
		return ExitOK
	}
	return c
}

func (a *app) pluginRemoveCmd() *command {
	c := &command{app: a, synopsis: "Remove an installed plugin and its lock entry", usage: "sparrow plugin remove NAME"}
	c.run = func(args []string) int {
		if len(args) != 1 {
			return a.usageError(c.usage, "want one plugin name")
		}
		opts, _, code := a.installOptions(installFlags{})
		if code != 0 {
			return code
		}
		r, err := pluginstall.Remove(a.ctx, opts, args[0])
		if err != nil {
			return a.installFailed(err)
		}
		fmt.Fprintf(a.env.Stdout, "Removed %s %s; the lock file %s no longer lists it.\n", r.Name, r.Old, opts.LockFile)
		return ExitOK
	}
	return c
}

func (a *app) pluginVerifyCmd() *command {
	c := &command{app: a, synopsis: "Re-hash every installed plugin against the lock file and its signature", usage: "sparrow plugin verify"}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		opts, _, code := a.installOptions(installFlags{})
		if code != 0 {
			return code
		}
		reports, err := pluginstall.Verify(a.ctx, opts)
		if err != nil {
			return a.installFailed(err)
		}
		bad := 0
		for _, r := range reports {
			if r.OK() {
				fmt.Fprintf(a.env.Stdout, "✓ %s %s intact\n", r.Name, r.Version)
				continue
			}
			bad++
			fmt.Fprintf(a.env.Stdout, "✗ %s %s\n", r.Name, r.Version)
			for _, m := range r.Mismatches {
				fmt.Fprintf(a.env.Stdout, "    %s\n", m)
			}
		}
		switch {
		case len(reports) == 0:
			fmt.Fprintf(a.env.Stdout, "No installed plugins and none in %s.\n", opts.LockFile)
		case bad > 0:
			fmt.Fprintf(a.env.Stderr, "sparrow: %d of %d plugin(s) do not match what was installed; reinstall with `sparrow plugin install` (no name) to restore the locked versions\n", bad, len(reports))
			return ExitError
		}
		return ExitOK
	}
	return c
}

func (a *app) printInstalled(r pluginstall.Result, lockFile string) {
	switch {
	case r.Unchanged:
		fmt.Fprintf(a.env.Stdout, "✓ %s %s already installed and intact\n", r.Name, r.New)
	case r.Old != "" && r.Old != r.New:
		fmt.Fprintf(a.env.Stdout, "⚓ %s %s → %s (signed by %s, from %s)\n", r.Name, r.Old, r.New, r.Fingerprint, r.Source)
	default:
		fmt.Fprintf(a.env.Stdout, "⚓ installed %s %s (signed by %s, from %s)\n", r.Name, r.New, r.Fingerprint, r.Source)
	}
	if r.KeyAccepted {
		fmt.Fprintf(a.env.Stdout, "  signer %s trusted for this install only; the lock file remembers it, add it to policy.trusted_keys to keep verifying\n", r.Fingerprint)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(a.env.Stdout, "  note: %s\n", w)
	}
	if !r.Unchanged {
		fmt.Fprintf(a.env.Stdout, "  locked in %s\n", lockFile)
	}
}

// installFailed reports an install error; nothing was changed.
func (a *app) installFailed(err error) int {
	fmt.Fprintf(a.env.Stderr, "sparrow: %v\n", err)
	var untrusted *plugintrust.UntrustedKeyError
	if !errors.As(err, &untrusted) {
		fmt.Fprintln(a.env.Stderr, "Nothing was changed: the installed plugins and the lock file are as they were.")
	}
	return ExitError
}
