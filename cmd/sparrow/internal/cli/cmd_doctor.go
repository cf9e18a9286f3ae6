package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// check is one doctor finding.
type check struct {
	ok   bool
	warn bool
	what string
	fix  string
}

func (a *app) doctorCmd() *command {
	c := &command{app: a, synopsis: "Check git, sandbox prerequisites, config and every plugin, and say how to fix each problem", usage: "sparrow doctor"}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		var checks []check
		add := func(c check) {
			checks = append(checks, c)
			mark, line := "✓", c.what
			switch {
			case !c.ok && c.warn:
				mark = "!"
			case !c.ok:
				mark = "✗"
			}
			if c.fix != "" && !c.ok {
				line += "\n    → " + c.fix
			}
			fmt.Fprintf(a.env.Stdout, "%s %s\n", mark, line)
		}
		add(a.checkGit())
		add(a.checkBwrap())
		cfg, diags := config.Load(a.loadOptions())
		if diags.HasErrors() {
			a.printDiagnostics(diags)
			add(check{what: "configuration has errors", fix: "fix the problems above, then run 'sparrow config validate'"})
		} else {
			add(check{ok: true, what: fmt.Sprintf("configuration loads (%d warnings)", len(diags))})
			add(checkWritable(cfg.Paths.StateDir))
			add(check{ok: true, what: policySummary(cfg)})
			a.checkPlugins(add)
		}
		failed := 0
		for _, c := range checks {
			if !c.ok && !c.warn {
				failed++
			}
		}
		if failed > 0 {
			fmt.Fprintf(a.env.Stdout, "\n%d problem(s) to fix before setting sail.\n", failed)
			return ExitError
		}
		fmt.Fprintln(a.env.Stdout, "\nAll hands accounted for; ready to sail.")
		return ExitOK
	}
	return c
}

func (a *app) checkGit() check {
	path, err := exec.LookPath("git")
	if err != nil {
		return check{what: "git not found", fix: "install git (Debian: apt-get install git); checkpoints and rewind need it"}
	}
	out, err := exec.CommandContext(a.ctx, path, "--version").Output()
	if err != nil {
		return check{what: "git does not run: " + err.Error(), fix: "reinstall git"}
	}
	return check{ok: true, what: strings.TrimSpace(string(out))}
}

func (a *app) checkBwrap() check {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return check{warn: true, what: "bubblewrap not found: the local-hardened sandbox is unavailable",
			fix: "install bubblewrap (Debian: apt-get install bubblewrap)"}
	}
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--die-with-parent", "true").CombinedOutput()
	if err != nil {
		return check{warn: true, what: "bubblewrap cannot create namespaces here: " + strings.TrimSpace(string(out)),
			fix: "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run where namespaces are allowed"}
	}
	return check{ok: true, what: "bubblewrap works (" + path + ")"}
}

func checkWritable(dir string) check {
	if dir == "" {
		return check{what: "no state directory: neither XDG_STATE_HOME nor HOME is set", fix: "set HOME"}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return check{what: "state directory " + dir + " cannot be created: " + err.Error(), fix: "fix its permissions"}
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return check{what: "state directory " + dir + " is not writable", fix: "fix its permissions"}
	}
	f.Close()
	os.Remove(f.Name())
	return check{ok: true, what: "state directory " + dir + " is writable"}
}

// checkPlugins starts every discovered plugin, in parallel, and asks each
// to answer; sandbox components report whether they can run here. Each
// finding goes to add, once.
func (a *app) checkPlugins(add func(check)) {
	k, code := a.openKernel(kernel.Options{})
	if k == nil {
		c := check{what: fmt.Sprintf("kernel did not open (exit %d)", code), fix: "see the errors above"}
		add(c)
		return
	}
	if len(k.Discovered) == 0 {
		c := check{what: "no plugins found in " + strings.Join(k.PluginDirs(), ", "),
			fix: "run 'make build' (plugins land in bin/plugins) or 'sparrow plugin install NAME'"}
		add(c)
		return
	}
	add(a.checkPluginConfinement(k))
	statuses := a.pluginStatuses(k, true)
	configuredSeen := false
	for _, m := range k.Discovered {
		st := statuses[m.Name]
		c := check{ok: !st.failed, what: fmt.Sprintf("plugin %s (%s %s): %s", m.Name, m.Kind, m.Version, st.text)}
		if st.failed {
			c.fix = fmt.Sprintf("see the log %s; reinstall the plugin from %s", k.LogFile, filepath.Dir(m.File))
		}
		if strings.HasPrefix(st.text, "unavailable") {
			c.ok, c.warn = false, true
		}
		add(c)
		if st.failed || m.Kind != plugin.KindSandbox || c.warn {
			continue
		}
		for _, name := range m.Components {
			configuredSeen = configuredSeen || name == k.Config.Sandbox
			add(a.checkSandbox(k, name))
		}
	}
	if !configuredSeen && k.Config.Sandbox != "" {
		add(a.checkSandbox(k, k.Config.Sandbox))
	}
}

// checkSandbox asks one sandbox what it can do here: the protections it
// has in force, or why it cannot run. Another backend being unavailable
// is a warning; the configured one is a problem, since runs use it.
func (a *app) checkSandbox(k *kernel.Kernel, name string) check {
	configured := name == k.Config.Sandbox
	label := "sandbox " + name
	if configured {
		label = "configured sandbox " + name
	}
	caps, err := a.capabilities(k, name)
	c := check{ok: err == nil && caps.Available, warn: !configured}
	switch {
	case err != nil:
		c.what, c.fix = fmt.Sprintf("%s: %s", label, firstLine(err)), "check the sandbox block in your config"
	case !caps.Available:
		c.what, c.fix = fmt.Sprintf("%s unavailable: %s", label, caps.UnavailableReason), "install what it needs, or pick another sandbox"
	case len(caps.Protections) > 0:
		c.what = fmt.Sprintf("%s ready; protections: %s", label, strings.Join(caps.Protections, "; "))
	default:
		c.what = fmt.Sprintf("%s ready; protections: none reported", label)
	}
	return c
}

// checkPluginConfinement says whether plugin processes run confined to
// what their manifests declare, and why not. Unconfined plugins still run
// (with only their declared environment), so it is a warning.
func (a *app) checkPluginConfinement(k *kernel.Kernel) check {
	c := k.Plugins.Confinement(a.ctx)
	if !c.Enabled {
		return check{warn: true, what: "plugins are not confined: " + c.Reason,
			fix: "plugins run with their declared environment only, but can reach the network, your home and the workspace; install what is missing to confine them"}
	}
	return check{ok: true, what: "plugins confined to their declared capabilities (sandbox backends excepted): " + c.Report.String() + "; init " + c.Init}
}
