package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk"
)

func (a *app) pluginListCmd() *command {
	var check bool
	c := &command{app: a, synopsis: "List discovered plugins: kind, version, source, status", usage: "sparrow plugin list [--check]",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&check, "check", false, "start every plugin and report whether it answers")
		}}
	c.run = func(args []string) int {
		if len(args) > 0 {
			return a.usageError(c.usage, "unexpected arguments %q", args)
		}
		k, code := a.openKernel(kernel.Options{})
		if k == nil {
			return code
		}
		status := a.pluginStatuses(k, check)
		if len(k.Discovered) == 0 {
			fmt.Fprintf(a.env.Stdout, "No plugins found. Searched: %s\n", strings.Join(k.PluginDirs(), ", "))
			return ExitOK
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tKIND\tVERSION\tCOMPONENTS\tSTATUS\tSOURCE")
		failed := false
		for _, m := range k.Discovered {
			st := status[m.Name]
			failed = failed || st.failed
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, m.Version, strings.Join(m.Components, ","), st.text, k.PluginOrigin(m.Name))
		}
		w.Flush()
		if failed {
			return ExitPlugin
		}
		return ExitOK
	}
	return c
}

type pluginStatus struct {
	text   string
	failed bool
}

// pluginStatuses says, for each discovered plugin, whether it can run; with
// check it starts them all in parallel and pings each.
func (a *app) pluginStatuses(k *kernel.Kernel, check bool) map[string]pluginStatus {
	out := map[string]pluginStatus{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ours := semver.MustParse(sdk.Version)
	for _, m := range k.Discovered {
		switch {
		case k.Unavailable(m.Name) != "":
			out[m.Name] = pluginStatus{text: "unavailable: " + k.Unavailable(m.Name)}
			continue
		case m.Runtime != pluginhost.RuntimeGRPC:
			out[m.Name] = pluginStatus{text: "ready (" + string(m.Runtime) + ")"}
			continue
		case !m.SDK.Check(ours):
			out[m.Name] = pluginStatus{text: fmt.Sprintf("incompatible: needs SDK %s", m.SDKRange), failed: true}
			continue
		case !check:
			out[m.Name] = pluginStatus{text: "ready"}
			continue
		}
		wg.Go(func() {
			st := a.probe(k, m.Name)
			mu.Lock()
			out[m.Name] = st
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func (a *app) probe(k *kernel.Kernel, name string) pluginStatus {
	ctx, cancel := context.WithTimeout(a.ctx, 15*time.Second)
	defer cancel()
	start := time.Now()
	p, err := k.Start(ctx, name)
	if err == nil {
		err = p.Ping(ctx)
	}
	if err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		return pluginStatus{text: "failed: " + first, failed: true}
	}
	return pluginStatus{text: fmt.Sprintf("running (pid %d, answered in %s)", p.PID(), time.Since(start).Round(time.Millisecond))}
}

func (a *app) pluginInfoCmd() *command {
	c := &command{app: a, synopsis: "Show a plugin's manifest, components and configuration schema", usage: "sparrow plugin info NAME"}
	c.run = func(args []string) int {
		if len(args) != 1 {
			return a.usageError(c.usage, "want one plugin name")
		}
		k, code := a.openKernel(kernel.Options{})
		if k == nil {
			return code
		}
		var m *pluginhost.Manifest
		for _, d := range k.Discovered {
			if d.Name == args[0] {
				m = d
			}
		}
		if m == nil {
			var names []string
			for _, d := range k.Discovered {
				names = append(names, d.Name)
			}
			msg := fmt.Sprintf("sparrow: no plugin named %q.", args[0])
			if best := config.Nearest(args[0], names); best != "" {
				msg += fmt.Sprintf(" Did you mean %q?", best)
			}
			fmt.Fprintln(a.env.Stderr, msg)
			return ExitError
		}
		w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "name:\t%s\nkind:\t%s\nversion:\t%s\nsdk:\t%s\nruntime:\t%s\nentry:\t%s\nmanifest:\t%s\n",
			m.Name, m.Kind, m.Version, m.SDKRange, m.Runtime, m.Entry, m.File)
		if m.Description != "" {
			fmt.Fprintf(w, "about:\t%s\n", m.Description)
		}
		fmt.Fprintf(w, "network:\t%t\nenv:\t%s\npaths:\t%s\n", m.Capabilities.Network, strings.Join(m.Capabilities.Env, ", "), strings.Join(m.Capabilities.Paths, ", "))
		w.Flush()
		if why := k.Unavailable(m.Name); why != "" {
			fmt.Fprintf(a.env.Stdout, "status: unavailable: %s\n", why)
			return ExitOK
		}
		p, err := k.Start(a.ctx, m.Name)
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.env.Stdout, "sha256: %s\nrunning: pid %d, sdk %s\n\ncomponents:\n", p.SHA256, p.PID(), p.Info.SDKVersion)
		for _, comp := range p.Info.Components {
			fmt.Fprintf(a.env.Stdout, "  %s %s", m.Kind, comp.Name)
			if comp.Description != "" {
				fmt.Fprintf(a.env.Stdout, " — %s", comp.Description)
			}
			fmt.Fprintln(a.env.Stdout)
			schema, err := p.Schema(a.ctx, comp.Name)
			if err != nil {
				return a.fail(err)
			}
			for _, at := range schema.Attributes {
				flags := ""
				if at.Required {
					flags += " required"
				}
				if at.Sensitive {
					flags += " sensitive"
				}
				def := ""
				if at.Default != nil {
					def = fmt.Sprintf(" (default %v)", at.Default)
				}
				fmt.Fprintf(a.env.Stdout, "    %s %s%s%s  %s\n", at.Name, at.Type, flags, def, at.Description)
			}
		}
		return ExitOK
	}
	return c
}

func (a *app) usageError(usage, format string, args ...any) int {
	fmt.Fprintf(a.env.Stderr, "sparrow: %s\nUsage: %s\n", fmt.Sprintf(format, args...), usage)
	return ExitUsage
}
