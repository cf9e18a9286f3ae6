package config

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// sensitiveMask is printed instead of a sensitive value. It is valid HCL
// (a parenthesised reference), so the output still parses.
const sensitiveMask = "(sensitive)"

// Show writes the merged configuration as HCL, each value followed by a
// comment saying where it came from ("# from FILE:LINE", "# from env
// SPARROW_MODEL", "# from flag --model" or "# default"). Sensitive
// plugin-specific attributes — those in c.Sensitive, those whose name
// contains key, token, secret, password, passwd or credential, and those
// read from such an environment variable with env() — are printed as
// (sensitive).
func (c *Config) Show(w io.Writer) error {
	root := &showBlock{}
	root.comment("# Effective Sparrow configuration: defaults < user < project < SPARROW_* env < flags.")
	c.showTop(root)
	for _, name := range slices.Sorted(maps.Keys(c.Plugins)) {
		root.add(c.showPlugin(c.Plugins[name]))
	}
	for _, kind := range componentKinds() {
		comps := c.components(kind)
		for _, name := range slices.Sorted(maps.Keys(comps)) {
			root.add(c.showComponent(comps[name]))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		root.add(c.showModel(c.Models[name]))
	}
	root.add(c.showPermissions())
	autonomy := root.child("autonomy")
	autonomy.attr("level", c.Autonomy.Level, c.origin("autonomy.level")+" ("+c.Autonomy.Name()+")")
	root.add(c.showBudget())
	root.add(c.showRouting())
	root.add(c.showCheckpoints())
	policy := root.child("policy")
	policy.attr("locked", c.Policy.Locked, c.origin("policy.locked"))
	policy.attr("trusted_keys", c.Policy.TrustedKeys, c.origin("policy.trusted_keys"))
	policy.attr("require_signatures", c.Policy.RequireSignatures, c.origin("policy.require_signatures"))
	policy.attr("wasm_only_from_data_dir", c.Policy.WASMOnlyFromDataDir, c.origin("policy.wasm_only_from_data_dir"))
	if mc := c.Policy.MaxCapabilities; mc != nil {
		caps := policy.child("max_capabilities")
		caps.attr("network", mc.Network, c.origin("policy.max_capabilities.network"))
		if mc.Paths != nil {
			caps.attr("paths", mc.Paths, c.origin("policy.max_capabilities.paths"))
		}
		if mc.Env != nil {
			caps.attr("env", mc.Env, c.origin("policy.max_capabilities.env"))
		}
	}

	var b strings.Builder
	root.render(&b, 0)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("show config: %w", err)
	}
	return nil
}

// origin renders the origin comment of a dotted path.
func (c *Config) origin(key string) string {
	return "# " + c.Origins[key].String()
}

func (c *Config) showTop(root *showBlock) {
	root.attr("model", optional(c.Model), c.origin("model"))
	root.attr("sandbox", c.Sandbox, c.origin("sandbox"))
	root.attr("log_level", c.LogLevel, c.origin("log_level"))
	root.attr("verify_command", c.VerifyCommand, c.origin("verify_command"))
	root.attr("trusted_projects", c.TrustedProjects, c.origin("trusted_projects"))
	root.attr("plugin_mirrors", c.PluginMirrors, c.origin("plugin_mirrors"))
	for _, f := range []struct {
		key, value string
	}{{"provider", c.Provider}, {"base_url", c.BaseURL}} {
		if f.value != "" {
			root.comment(fmt.Sprintf("# %s = %s  %s", f.key, hclText(f.value), c.origin(f.key)))
		}
	}
	if c.Verbose {
		root.comment("# verbose = true  " + c.origin("verbose"))
	}
}

func (c *Config) showPlugin(p *Plugin) *showBlock {
	key := "plugin." + p.Name
	b := &showBlock{header: fmt.Sprintf("plugin %q", p.Name)}
	b.attr("source", p.Source, c.origin(key+".source"))
	b.attr("version", optional(p.Version), c.origin(key+".version"))
	b.attr("sha256", optional(p.SHA256), c.origin(key+".sha256"))
	b.attr("env", p.Env, c.origin(key+".env"))
	b.attr("enabled", p.Enabled, c.origin(key+".enabled"))
	return b
}

func (c *Config) showComponent(comp *Component) *showBlock {
	key := comp.Kind + "." + comp.Name
	b := &showBlock{header: fmt.Sprintf("%s %q", comp.Kind, comp.Name)}
	b.attr("plugin", optional(comp.Plugin), c.origin(key+".plugin"))
	b.attr("enabled", comp.Enabled, c.origin(key+".enabled"))

	// Later layers override earlier ones, as in DecodeComponent.
	type shown struct {
		attr   *hcl.Attribute
		source Source
	}
	merged := map[string]shown{}
	for i, body := range comp.Bodies {
		attrs, _ := body.JustAttributes()
		for name, attr := range attrs {
			merged[name] = shown{attr: attr, source: comp.Sources[i]}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(merged)) {
		s := merged[name]
		o := Origin{Source: s.source, File: s.attr.Range.Filename, Line: s.attr.Range.Start.Line}
		comment := "# " + o.String()
		if c.Sensitive[key+"."+name] || looksSensitive(name) || readsSensitiveEnv(s.attr.Expr) {
			b.raw(name, sensitiveMask, comment)
			continue
		}
		v, diags := s.attr.Expr.Value(evalContext(c.getenv))
		if diags.HasErrors() || !v.IsWhollyKnown() {
			b.raw(name, "null", comment+" (cannot evaluate: "+strings.TrimSpace(diags.Error())+")")
			continue
		}
		b.raw(name, string(hclwrite.TokensForValue(v).Bytes()), comment)
	}
	return b
}

func (c *Config) showModel(m *Model) *showBlock {
	key := "model." + m.Name
	b := &showBlock{header: fmt.Sprintf("model %q", m.Name)}
	b.attr("provider", optional(m.Provider), c.origin(key+".provider"))
	b.attr("id", optional(m.ID), c.origin(key+".id"))
	b.attr("context_window", optionalNum(m.ContextWindow), c.origin(key+".context_window"))
	b.attr("input_price_per_mtok", m.InputPricePerMTok, c.origin(key+".input_price_per_mtok"))
	b.attr("output_price_per_mtok", m.OutputPricePerMTok, c.origin(key+".output_price_per_mtok"))
	b.attr("fallback", m.Fallback, c.origin(key+".fallback"))
	if m.Seed != nil {
		b.attr("seed", *m.Seed, c.origin(key+".seed"))
	}
	return b
}

func (c *Config) showPermissions() *showBlock {
	p := c.Permissions
	b := &showBlock{header: "permissions"}
	b.attr("mode", p.Mode, c.origin("permissions.mode"))
	b.attr("denied_paths", p.DeniedPaths, c.origin("permissions.denied_paths"))
	for _, kind := range []struct {
		name  string
		rules []Rule
	}{{"allow", p.Allow}, {"ask", p.Ask}, {"deny", p.Deny}} {
		for _, r := range kind.rules {
			rb := b.child(kind.name)
			rb.headerComment = "# " + r.Origin.String()
			for _, l := range []struct {
				name string
				list []string
			}{{"tools", r.Tools}, {"paths", r.Paths}, {"commands", r.Commands}, {"providers", r.Providers}, {"surfaces", r.Surfaces}} {
				if len(l.list) > 0 {
					rb.attr(l.name, l.list, "")
				}
			}
			if r.Reason != "" {
				rb.attr("reason", r.Reason, "")
			}
		}
	}
	return b
}

func (c *Config) showBudget() *showBlock {
	b := &showBlock{header: "budget"}
	b.attr("max_usd", optionalFloat(c.Budget.MaxUSD), c.origin("budget.max_usd"))
	b.attr("max_turns", c.Budget.MaxTurns, c.origin("budget.max_turns"))
	b.attr("max_tokens", optionalNum(c.Budget.MaxTokens), c.origin("budget.max_tokens"))
	return b
}

func (c *Config) showRouting() *showBlock {
	b := &showBlock{header: "routing"}
	b.attr("default", optional(c.Routing.Default), c.origin("routing.default"))
	for _, r := range c.Routing.Rules {
		rb := b.child(fmt.Sprintf("rule %q", r.Name))
		rb.attr("match", r.Match, c.origin("routing.rule."+r.Name+".match"))
		rb.attr("model", r.Model, c.origin("routing.rule."+r.Name+".model"))
	}
	return b
}

// looksSensitive reports whether an attribute name suggests a secret.
func looksSensitive(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"key", "token", "secret", "password", "passwd", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// readsSensitiveEnv reports whether expr calls env() with a variable name
// that suggests a secret, such as env("OPENAI_API_KEY").
func readsSensitiveEnv(expr hcl.Expression) bool {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return false
	}
	found := false
	_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "env" || len(call.Args) == 0 {
			return nil
		}
		v, diags := call.Args[0].Value(nil)
		if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String || looksSensitive(v.AsString()) {
			found = true // a name that cannot be read is treated as secret
		}
		return nil
	})
	return found
}

// optional returns nil for an empty string, so it prints as null.
func optional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optionalNum(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func optionalFloat(f float64) any {
	if f == 0 {
		return nil
	}
	return f
}

// hclText renders a Go value as an HCL literal.
func hclText(v any) string {
	var cv cty.Value
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		cv = cty.StringVal(x)
	case bool:
		cv = cty.BoolVal(x)
	case int:
		cv = cty.NumberIntVal(int64(x))
	case float64:
		cv = cty.NumberFloatVal(x)
	case time.Duration:
		cv = cty.StringVal(x.String())
	case []string:
		if len(x) == 0 {
			return "[]"
		}
		elems := make([]cty.Value, len(x))
		for i, s := range x {
			elems[i] = cty.StringVal(s)
		}
		cv = cty.ListVal(elems)
	default:
		return fmt.Sprintf("%q", fmt.Sprint(x))
	}
	return string(hclwrite.TokensForValue(cv).Bytes())
}
