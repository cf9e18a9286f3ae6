package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// ToolEntry is one tool and the plugin serving it.
type ToolEntry struct {
	Tool    tool.Tool
	Plugin  string
	Runtime pluginhost.Runtime
	// Disabled is set when a `tool "NAME" { enabled = false }` block
	// turns the tool off.
	Disabled bool
}

// Tools starts every tool plugin in parallel and returns the tools they
// serve, minus those a `tool "NAME" { enabled = false }` block disables.
// A tool plugin that fails is reported in the error with the others'
// tools still returned, so one broken plugin does not sink a run.
func (k *Kernel) Tools(ctx context.Context) ([]tool.Tool, error) {
	entries, err := k.ToolEntries(ctx)
	var out []tool.Tool
	for _, e := range entries {
		if !e.Disabled {
			out = append(out, e.Tool)
		}
	}
	return out, err
}

// ToolEntries is every tool of every available tool plugin, disabled ones
// included, in discovery order. When two plugins serve the same name, the
// one found first is kept and the other is reported in the error.
func (k *Kernel) ToolEntries(ctx context.Context) ([]ToolEntry, error) {
	var plugins []*pluginhost.Manifest
	for _, m := range k.Discovered {
		if m.Kind == plugin.KindTool && k.unavailable[m.Name] == "" {
			plugins = append(plugins, m)
		}
	}
	served := make([][]tool.Tool, len(plugins))
	errs := make([]error, len(plugins))
	var wg sync.WaitGroup
	for i, m := range plugins {
		wg.Go(func() {
			p, err := k.Plugins.Start(ctx, m.Name)
			var ts []tool.Tool
			if err == nil {
				ts, err = p.Tools(ctx)
			}
			// Each tool gets its `tool "NAME" {…}` block, checked against
			// the schema it declares, before first use.
			for _, t := range ts {
				if err != nil {
					break
				}
				tn := t.Spec().Name
				if b := k.Config.Tools[tn]; b == nil || b.Enabled {
					err = k.configure(ctx, p, plugin.KindTool, tn, tn, b)
				}
			}
			if err != nil {
				errs[i] = err
				return
			}
			served[i] = ts
		})
	}
	wg.Wait()
	var out []ToolEntry
	seen := map[string]string{}
	for i, ts := range served {
		for _, t := range ts {
			name := t.Spec().Name
			if first, dup := seen[name]; dup {
				errs = append(errs, fmt.Errorf("plugins %s and %s both serve a tool named %s; %s's is used", first, plugins[i].Name, name, first))
				continue
			}
			seen[name] = plugins[i].Name
			b := k.Config.Tools[name]
			out = append(out, ToolEntry{Tool: t, Plugin: plugins[i].Name, Runtime: plugins[i].Runtime, Disabled: b != nil && !b.Enabled})
		}
	}
	return out, errors.Join(errs...)
}

// Routes resolves a model name to the model and its fallback chain, each
// with its provider started and configured and its price known where the
// config or the provider knows it.
func (k *Kernel) Routes(ctx context.Context, model string) ([]engine.Route, error) {
	if model == "" {
		return nil, errors.New("no model: pass --model, set SPARROW_MODEL, or set model in sparrow.hcl")
	}
	var routes []engine.Route
	seen := map[string]bool{}
	for name := model; name != "" && !seen[name]; {
		seen[name] = true
		r, err := k.route(ctx, name)
		if err != nil {
			if len(routes) == 0 {
				return nil, err
			}
			k.Log.Warn("fallback model unavailable", "model", name, "error", err)
			break
		}
		routes = append(routes, r)
		name = ""
		if m := k.Config.Models[r.Name]; m != nil {
			for _, f := range m.Fallback {
				if !seen[f] {
					// Walk the first unseen fallback; its own fallbacks follow.
					name = f
					break
				}
			}
		}
	}
	return routes, nil
}

func (k *Kernel) route(ctx context.Context, name string) (engine.Route, error) {
	r := engine.Route{Name: name, Model: name}
	providerName := k.Config.Provider
	if m := k.Config.Models[name]; m != nil {
		if m.ID != "" {
			r.Model = m.ID
		}
		if m.Provider != "" {
			providerName = m.Provider
		}
		r.Seed = m.Seed
		if m.InputPricePerMTok > 0 || m.OutputPricePerMTok > 0 {
			r.Price = engine.Price{Input: m.InputPricePerMTok, Output: m.OutputPricePerMTok, Known: true}
		}
	}
	if providerName == "" {
		providerName = k.inferProvider(r.Model)
	}
	if providerName == "" {
		return r, fmt.Errorf("which provider serves model %q? Pass --provider, or add a model %q { provider = ... } block", name, name)
	}
	p, err := k.Provider(ctx, providerName)
	if err != nil {
		return r, err
	}
	r.Provider, r.ProviderName = p, providerName
	if !r.Price.Known {
		if models, err := p.Models(ctx); err == nil {
			for _, m := range models {
				if m.ID == r.Model && (m.InputPricePerMTok > 0 || m.OutputPricePerMTok > 0) {
					r.Price = engine.Price{Input: m.InputPricePerMTok, Output: m.OutputPricePerMTok,
						CacheRead: m.CacheReadPerMTok, CacheWrite: m.CacheWritePerMTok, Known: true}
				}
			}
		}
	}
	return r, nil
}

// inferProvider guesses the provider from a well-known model name.
func (k *Kernel) inferProvider(model string) string {
	switch {
	case k.Config.BaseURL != "":
		return "openai-compatible"
	case strings.HasPrefix(model, "claude"):
		return "anthropic"
	case strings.HasPrefix(model, "gpt-") || strings.HasPrefix(model, "o1") || strings.HasPrefix(model, "o3") ||
		strings.HasPrefix(model, "o4") || strings.HasPrefix(model, "chatgpt"):
		return "openai"
	case strings.HasPrefix(model, "replay"):
		return "replay"
	}
	return ""
}
