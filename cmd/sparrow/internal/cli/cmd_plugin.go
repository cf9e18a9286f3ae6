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
	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

func (a *app) pluginListCmd() *command {
	var check, asJSON bool
	c := &command{app: a, synopsis: "List discovered plugins: kind, version, signer, status, source", usage: "sparrow plugin list [--check] [--json]",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&check, "check", false, "start every plugin and report whether it answers")
			fs.BoolVar(&asJSON, "json", false, "print one JSON object with the policy and every plugin")
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
		failed := false
		for _, st := range status {
			failed = failed || st.failed
		}
		if asJSON {
			if err := a.pluginListJSON(k, status); err != nil {
				return a.fail(err)
			}
		} else if len(k.Discovered) == 0 {
			fmt.Fprintf(a.env.Stdout, "No plugins found. Searched: %s\n", strings.Join(k.PluginDirs(), ", "))
			fmt.Fprintln(a.env.Stdout, policySummary(k.Config))
			return ExitOK
		} else {
			w := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tKIND\tVERSION\tCOMPONENTS\tSIGNER\tSTATUS\tSOURCE")
			for _, m := range k.Discovered {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, m.Version, strings.Join(m.Components, ","),
					signerText(k.Trust(m.Name)), status[m.Name].text, sourceText(k, m.Name))
			}
			w.Flush()
			fmt.Fprintln(a.env.Stdout, policySummary(k.Config))
		}
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
		case !m.SDK.Check(ours):
			out[m.Name] = pluginStatus{text: fmt.Sprintf("incompatible: needs SDK %s", m.SDKRange), failed: true}
			continue
		case !check && m.Runtime == pluginhost.RuntimeWASM:
			out[m.Name] = pluginStatus{text: "ready (wasm)"}
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
	took := time.Since(start).Round(time.Millisecond)
	if p.Manifest.Runtime == pluginhost.RuntimeWASM {
		return pluginStatus{text: fmt.Sprintf("compiled (wasm, validated and loaded in %s)", took)}
	}
	return pluginStatus{text: fmt.Sprintf("running (pid %d, answered in %s)", p.PID(), took)}
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
		if m.Runtime == pluginhost.RuntimeWASM {
			fmt.Fprintf(w, "authority:\t%s\n", wasmAuthority(m))
		} else {
			c := m.Capabilities
			fmt.Fprintf(w, "network:\t%t\nworkspace:\t%t\nenv:\t%s\npaths:\t%s\n", c.Network || m.Kind == plugin.KindProvider,
				c.Workspace || m.Kind == plugin.KindTool, strings.Join(c.Env, ", "), strings.Join(c.Paths, ", "))
		}
		t := k.Trust(m.Name)
		fmt.Fprintf(w, "signer:\t%s\n", signerText(t))
		if t.Locked != "" {
			fmt.Fprintf(w, "locked:\t%s in %s (from %s)\n", t.Locked, k.LockFilePath(), t.Source)
		}
		if t.Problem != "" {
			fmt.Fprintf(w, "release:\t%s\n", t.Problem)
		}
		w.Flush()
		if why := k.Unavailable(m.Name); why != "" {
			fmt.Fprintf(a.env.Stdout, "status: unavailable: %s\n", why)
			return ExitOK
		}
		p, err := k.Start(a.ctx, m.Name)
		if err != nil {
			return a.fail(err)
		}
		if m.Runtime == pluginhost.RuntimeWASM {
			fmt.Fprintf(a.env.Stdout, "sha256: %s\ncompiled: in-process WASM module, a fresh instance per call\n\ncomponents:\n", p.SHA256)
		} else {
			fmt.Fprintf(a.env.Stdout, "sha256: %s\nrunning: pid %d, sdk %s\n\ncomponents:\n", p.SHA256, p.PID(), p.Info.SDKVersion)
		}
		risks := map[string]string{}
		for _, t := range m.Tools {
			risks[t.Spec.Name] = " (" + string(t.Spec.Risk) + ")"
		}
		for _, comp := range p.Info.Components {
			fmt.Fprintf(a.env.Stdout, "  %s %s%s", m.Kind, comp.Name, risks[comp.Name])
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

// wasmAuthority says what a WASM plugin's module may reach.
func wasmAuthority(m *pluginhost.Manifest) string {
	grants := "no clock, no randomness (deterministic fakes)"
	switch c := m.Capabilities; {
	case c.Clock && c.Random:
		grants = "the real clock and randomness"
	case c.Clock:
		grants = "the real clock; no randomness (a deterministic fake)"
	case c.Random:
		grants = "randomness; no clock (a deterministic fake)"
	}
	return "the workspace only (read-only unless a mutating call was allowed; denied paths hidden), no network, no environment, " + grants
}

func (a *app) usageError(usage, format string, args ...any) int {
	fmt.Fprintf(a.env.Stderr, "sparrow: %s\nUsage: %s\n", fmt.Sprintf(format, args...), usage)
	return ExitUsage
}

// signerText is the SIGNER column: the key's fingerprint, marked when
// the key is not trusted; "unsigned" for a development plugin.
func signerText(t kernel.PluginTrust) string {
	switch {
	case t.Signer == "":
		return "unsigned"
	case !t.SignerTrusted:
		return t.Signer[:16] + " (untrusted)"
	default:
		return t.Signer[:16]
	}
}

// sourceText is where a plugin came from: the mirror in the lock file
// and the directory it loads from.
func sourceText(k *kernel.Kernel, name string) string {
	if src := k.Trust(name).Source; src != "" {
		return k.PluginOrigin(name) + " (from " + src + ")"
	}
	return k.PluginOrigin(name)
}

type pluginJSON struct {
	Name          string   `json:"name"`
	Kind          string   `json:"kind"`
	Version       string   `json:"version"`
	Runtime       string   `json:"runtime"`
	Components    []string `json:"components"`
	Dir           string   `json:"dir"`
	Source        string   `json:"source,omitempty"`
	Locked        string   `json:"locked_version,omitempty"`
	Signer        string   `json:"signer,omitempty"`
	SignerTrusted bool     `json:"signer_trusted"`
	Status        string   `json:"status"`
	OK            bool     `json:"ok"`
}

func (a *app) pluginListJSON(k *kernel.Kernel, status map[string]pluginStatus) error {
	out := struct {
		Policy   config.Policy `json:"policy"`
		LockFile string        `json:"lock_file"`
		Plugins  []pluginJSON  `json:"plugins"`
	}{Policy: k.Config.Policy, LockFile: k.LockFilePath(), Plugins: []pluginJSON{}}
	for _, m := range k.Discovered {
		t := k.Trust(m.Name)
		st := status[m.Name]
		out.Plugins = append(out.Plugins, pluginJSON{Name: m.Name, Kind: string(m.Kind), Version: m.Version.String(),
			Runtime: string(m.Runtime), Components: m.Components, Dir: k.PluginOrigin(m.Name), Source: t.Source,
			Locked: t.Locked, Signer: t.Signer, SignerTrusted: t.SignerTrusted, Status: st.text,
			OK: !st.failed && k.Unavailable(m.Name) == ""})
	}
	return writeJSON(a.env.Stdout, out)
}
