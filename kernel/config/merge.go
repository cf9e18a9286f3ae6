package config

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// merger applies one file layer to a Config, recording origins. An
// untrusted merger (a project file whose directory the user has not
// trusted) applies only settings that keep or narrow what Sparrow may do.
type merger struct {
	cfg     *Config
	src     Source
	file    string
	trusted bool
	diags   hcl.Diagnostics
}

func (m *merger) origin(r hcl.Range) Origin {
	return Origin{Source: m.src, File: m.file, Line: r.Start.Line}
}

// set stores v in dst and records its origin under key, when v is set.
func set[T any](m *merger, key string, dst *T, v val[T]) {
	if !v.Set {
		return
	}
	*dst = v.V
	m.cfg.Origins[key] = m.origin(v.Range)
}

// allowed reports whether a widening setting may apply. In an untrusted
// project it records a warning at rng saying why the setting was ignored
// and how to trust the project, and returns false.
func (m *merger) allowed(rng hcl.Range, what, why string) bool {
	if m.trusted {
		return true
	}
	userFile := m.cfg.Paths.UserFile
	if userFile == "" {
		userFile = "your user config file"
	}
	m.diags = append(m.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Untrusted project setting ignored",
		Detail: fmt.Sprintf("Ignored %s: it %s, and this project (%s) is not trusted. "+
			"A project file may narrow what Sparrow may do but not widen it. "+
			"To trust this project, add %q to trusted_projects in %s.",
			what, why, m.cfg.Paths.ProjectDir, m.cfg.Paths.ProjectDir, userFile),
		Subject: rng.Ptr(),
	})
	return false
}

func (m *merger) apply(f *File) {
	m.applyTop(f.top)
	for _, p := range f.plugins {
		m.applyPlugin(p)
	}
	for _, c := range f.components {
		m.applyComponent(c)
	}
	for _, mb := range f.models {
		m.applyModel(mb)
	}
	if f.permissions != nil {
		m.applyPermissions(f.permissions)
	}
	if f.autonomy != nil {
		m.applyAutonomy(f.autonomy)
	}
	if f.budget != nil {
		m.applyBudget(f.budget)
	}
	if f.routing != nil {
		m.applyRouting(f.routing)
	}
	if f.checkpoints != nil {
		m.applyCheckpoints(f.checkpoints)
	}
	if f.policy != nil {
		m.applyPolicy(f.policy)
	}
}

func (m *merger) applyTop(t topAttrs) {
	set(m, "model", &m.cfg.Model, t.model)
	set(m, "log_level", &m.cfg.LogLevel, t.logLevel)
	if t.sandbox.Set && (m.trusted || m.narrowerSandbox(t.sandbox)) {
		set(m, "sandbox", &m.cfg.Sandbox, t.sandbox)
	}
	if t.verifyCommand.Set && m.allowed(t.verifyCommand.Range, "verify_command", "runs a command") {
		set(m, "verify_command", &m.cfg.VerifyCommand, t.verifyCommand)
	}
	// A mirror only offers releases; what installs is decided by the
	// signature and the trusted keys, so a project may name mirrors.
	set(m, "plugin_mirrors", &m.cfg.PluginMirrors, t.pluginMirrors)
	if t.trustedProjects.Set && m.allowed(t.trustedProjects.Range, "trusted_projects", "grants trust") {
		for _, p := range t.trustedProjects.V {
			m.cfg.TrustedProjects = union(m.cfg.TrustedProjects, []string{m.cfg.expandHome(p)})
		}
		m.cfg.Origins["trusted_projects"] = m.origin(t.trustedProjects.Range)
	}
}

// narrowerSandbox allows an untrusted project to switch to a sandbox that
// isolates at least as well as the current one.
func (m *merger) narrowerSandbox(v val[string]) bool {
	cur, okCur := m.cfg.sandboxIsolation(m.cfg.Sandbox)
	next, okNext := m.cfg.sandboxIsolation(v.V)
	if okNext && (!okCur || next >= cur) {
		return true
	}
	return m.allowed(v.Range, fmt.Sprintf("sandbox = %q", v.V),
		fmt.Sprintf("may isolate less than the current sandbox %q", m.cfg.Sandbox))
}

func (m *merger) applyPlugin(p *pluginBlock) {
	key := "plugin." + p.name
	pl := m.cfg.Plugins[p.name]
	if pl == nil {
		pl = &Plugin{Name: p.name, Enabled: true}
	}
	if !m.trusted {
		if p.source.Set || p.version.Set || p.sha256.Set || p.env.Set || (p.enabled.Set && p.enabled.V && !pl.Enabled) {
			m.allowed(p.rng, fmt.Sprintf("plugin %q", p.name), "chooses or pins plugin code")
		}
		if p.enabled.Set && !p.enabled.V {
			set(m, key+".enabled", &pl.Enabled, p.enabled)
			m.cfg.Plugins[p.name] = pl
		}
		return
	}
	set(m, key+".source", &pl.Source, p.source)
	set(m, key+".version", &pl.Version, p.version)
	set(m, key+".sha256", &pl.SHA256, p.sha256)
	set(m, key+".env", &pl.Env, p.env)
	set(m, key+".enabled", &pl.Enabled, p.enabled)
	m.cfg.Plugins[p.name] = pl
}

// applyComponent merges a provider, sandbox, tool or surface block. An
// untrusted project may only disable a component: its plugin-specific
// settings could redirect a provider (and the user's API key) elsewhere.
func (m *merger) applyComponent(cb *componentBlock) {
	key := cb.kind + "." + cb.name
	comps := m.cfg.components(cb.kind)
	c := comps[cb.name]
	if c == nil {
		c = &Component{Kind: cb.kind, Name: cb.name, Enabled: true}
	}
	if !m.trusted {
		attrs, diags := cb.remain.JustAttributes()
		if cb.plugin.Set || len(attrs) > 0 || diags.HasErrors() || (cb.enabled.Set && cb.enabled.V && !c.Enabled) {
			m.allowed(cb.rng, fmt.Sprintf("%s %q", cb.kind, cb.name), "configures a component with the user's credentials and privileges")
		}
		if cb.enabled.Set && !cb.enabled.V {
			set(m, key+".enabled", &c.Enabled, cb.enabled)
			comps[cb.name] = c
		}
		return
	}
	set(m, key+".plugin", &c.Plugin, cb.plugin)
	set(m, key+".enabled", &c.Enabled, cb.enabled)
	c.Bodies = append(c.Bodies, cb.remain)
	c.Sources = append(c.Sources, m.src)
	comps[cb.name] = c
}

func (m *merger) applyModel(mb *modelBlock) {
	key := "model." + mb.name
	md := m.cfg.Models[mb.name]
	if md == nil {
		md = &Model{Name: mb.name}
	}
	set(m, key+".provider", &md.Provider, mb.provider)
	set(m, key+".id", &md.ID, mb.id)
	set(m, key+".context_window", &md.ContextWindow, mb.contextWindow)
	set(m, key+".fallback", &md.Fallback, mb.fallback)
	if mb.seed.Set {
		seed := int64(mb.seed.V)
		set(m, key+".seed", &md.Seed, val[*int64]{V: &seed, Set: true, Range: mb.seed.Range})
	}
	// A lower price would let a run spend past its budget.
	if !mb.inPrice.Set || mb.inPrice.V >= md.InputPricePerMTok ||
		m.allowed(mb.inPrice.Range, key+".input_price_per_mtok", "lowers a price that budgets are computed from") {
		set(m, key+".input_price_per_mtok", &md.InputPricePerMTok, mb.inPrice)
	}
	if !mb.outPrice.Set || mb.outPrice.V >= md.OutputPricePerMTok ||
		m.allowed(mb.outPrice.Range, key+".output_price_per_mtok", "lowers a price that budgets are computed from") {
		set(m, key+".output_price_per_mtok", &md.OutputPricePerMTok, mb.outPrice)
	}
	m.cfg.Models[mb.name] = md
}

func (m *merger) applyPermissions(p *permissionsBlock) {
	perm := &m.cfg.Permissions
	if p.mode.Set && (modeRank(p.mode.V) <= modeRank(perm.Mode) ||
		m.allowed(p.mode.Range, fmt.Sprintf("permissions.mode = %q", p.mode.V),
			fmt.Sprintf("is more permissive than %q", perm.Mode))) {
		set(m, "permissions.mode", &perm.Mode, p.mode)
	}
	if p.deniedPaths.Set {
		// Denied paths only ever accumulate: every layer may add some.
		perm.DeniedPaths = union(perm.DeniedPaths, p.deniedPaths.V)
		m.cfg.Origins["permissions.denied_paths"] = m.origin(p.deniedPaths.Range)
	}
	for _, rb := range p.rules {
		r := rb.rule
		r.Origin = m.origin(rb.rng)
		switch rb.kind {
		case "allow":
			if m.allowed(rb.rng, "an allow rule", "grants permissions") {
				perm.Allow = append(perm.Allow, r)
			}
		case "ask":
			perm.Ask = append(perm.Ask, r)
		case "deny":
			perm.Deny = append(perm.Deny, r)
		}
	}
}

func (m *merger) applyAutonomy(a *autonomyBlock) {
	cur := m.cfg.Autonomy.Level
	if a.level.Set && (a.level.V <= cur || m.allowed(a.level.Range,
		fmt.Sprintf("autonomy.level = %v", a.level.V), fmt.Sprintf("raises autonomy above %v", cur))) {
		set(m, "autonomy.level", &m.cfg.Autonomy.Level, a.level)
	}
}

func (m *merger) applyBudget(b *budgetBlock) {
	bud := &m.cfg.Budget
	if b.maxUSD.Set && (bud.MaxUSD == 0 || b.maxUSD.V <= bud.MaxUSD || m.allowed(b.maxUSD.Range,
		"budget.max_usd", fmt.Sprintf("raises the spending limit above %v", bud.MaxUSD))) {
		set(m, "budget.max_usd", &bud.MaxUSD, b.maxUSD)
	}
	if b.maxTurns.Set && (b.maxTurns.V <= bud.MaxTurns || m.allowed(b.maxTurns.Range,
		"budget.max_turns", fmt.Sprintf("raises the turn limit above %d", bud.MaxTurns))) {
		set(m, "budget.max_turns", &bud.MaxTurns, b.maxTurns)
	}
	if b.maxTokens.Set && (bud.MaxTokens == 0 || b.maxTokens.V <= bud.MaxTokens || m.allowed(b.maxTokens.Range,
		"budget.max_tokens", fmt.Sprintf("raises the token limit above %d", bud.MaxTokens))) {
		set(m, "budget.max_tokens", &bud.MaxTokens, b.maxTokens)
	}
}

func (m *merger) applyRouting(r *routingBlock) {
	rt := &m.cfg.Routing
	set(m, "routing.default", &rt.Default, r.def)
	for _, rb := range r.rules {
		i := slices.IndexFunc(rt.Rules, func(x RoutingRule) bool { return x.Name == rb.name })
		if i < 0 {
			rt.Rules = append(rt.Rules, RoutingRule{Name: rb.name})
			i = len(rt.Rules) - 1
			m.cfg.ruleRanges[rb.name] = rb.rng
		}
		key := "routing.rule." + rb.name
		set(m, key+".match", &rt.Rules[i].Match, rb.match)
		set(m, key+".model", &rt.Rules[i].Model, rb.model)
	}
}

func (m *merger) applyPolicy(p *policyBlock) {
	if !m.trusted {
		for _, r := range setRanges(p.locked, p.requireSignatures, p.wasmOnlyFromDataDir) {
			m.allowed(r, "policy", "decides which plugins may load")
		}
		if p.trustedKeys.Set {
			m.allowed(p.trustedKeys.Range, "policy.trusted_keys", "decides whose plugins are trusted")
		}
		if p.maxCaps != nil {
			m.allowed(p.maxCaps.rng, "policy.max_capabilities", "decides what plugins may do")
		}
		return
	}
	pol := &m.cfg.Policy
	set(m, "policy.locked", &pol.Locked, p.locked)
	set(m, "policy.require_signatures", &pol.RequireSignatures, p.requireSignatures)
	set(m, "policy.wasm_only_from_data_dir", &pol.WASMOnlyFromDataDir, p.wasmOnlyFromDataDir)
	set(m, "policy.trusted_keys", &pol.TrustedKeys, p.trustedKeys)
	if mc := p.maxCaps; mc != nil {
		caps := &MaxCapabilities{Network: true}
		set(m, "policy.max_capabilities.network", &caps.Network, mc.network)
		set(m, "policy.max_capabilities.paths", &caps.Paths, mc.paths)
		set(m, "policy.max_capabilities.env", &caps.Env, mc.env)
		if caps.Paths == nil && mc.paths.Set {
			caps.Paths = []string{}
		}
		if caps.Env == nil && mc.env.Set {
			caps.Env = []string{}
		}
		pol.MaxCapabilities = caps
	}
}

func setRanges(vs ...val[bool]) []hcl.Range {
	var out []hcl.Range
	for _, v := range vs {
		if v.Set {
			out = append(out, v.Range)
		}
	}
	return out
}

// union appends the entries of add that base does not hold yet.
func union(base, add []string) []string {
	out := slices.Clone(base)
	for _, s := range add {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
