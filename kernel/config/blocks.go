package config

import (
	"math"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

type pluginBlock struct {
	name                    string
	rng                     hcl.Range
	source, version, sha256 val[string]
	env                     val[[]string]
	enabled                 val[bool]
}

type componentBlock struct {
	kind, name string
	rng        hcl.Range
	plugin     val[string]
	enabled    val[bool]
	remain     hcl.Body
}

type modelBlock struct {
	name              string
	rng               hcl.Range
	provider, id      val[string]
	contextWindow     val[int]
	inPrice, outPrice val[float64]
	fallback          val[[]string]
	seed              val[int]
}

type permissionsBlock struct {
	mode        val[string]
	deniedPaths val[[]string]
	rules       []ruleBlock
}

type ruleBlock struct {
	kind string // allow, ask or deny
	rng  hcl.Range
	rule Rule
}

type autonomyBlock struct{ level val[float64] }

type budgetBlock struct {
	maxUSD              val[float64]
	maxTurns, maxTokens val[int]
}

type routingBlock struct {
	def   val[string]
	rules []routingRuleBlock
}

type routingRuleBlock struct {
	name         string
	rng          hcl.Range
	match, model val[string]
}

type policyBlock struct {
	locked, requireSignatures, wasmOnlyFromDataDir val[bool]
	trustedKeys                                    val[[]string]
	maxCaps                                        *maxCapsBlock
}

type maxCapsBlock struct {
	rng        hcl.Range
	network    val[bool]
	paths, env val[[]string]
}

// content decodes a block body against its schema, keeping diagnostics.
func (d *decoder) content(b *hcl.Block, path string) *hcl.BodyContent {
	content, diags := b.Body.Content(schemaFor(path))
	d.diags = append(d.diags, diags...)
	return content
}

func decodePlugin(d *decoder, b *hcl.Block) *pluginBlock {
	a := d.content(b, "plugin").Attributes
	p := &pluginBlock{
		name:    b.Labels[0],
		rng:     b.DefRange,
		source:  d.str(a, "source"),
		version: d.str(a, "version"),
		sha256:  d.str(a, "sha256"),
		env:     d.strList(a, "env"),
		enabled: d.boolean(a, "enabled"),
	}
	if p.version.Set && !d.check(validConstraint(p.version.V), a, "version", "Invalid version constraint",
		"%q is not a semver constraint; write something like \">= 1.2.0, < 2.0.0\" or \"~> 1.4\".", p.version.V) {
		p.version = val[string]{}
	}
	if p.sha256.Set && !d.check(validSHA256(p.sha256.V), a, "sha256", "Invalid sha256",
		"sha256 must be 64 hexadecimal characters, as printed by sha256sum.") {
		p.sha256 = val[string]{}
	}
	for _, e := range p.env.V {
		if !d.check(validEnvName(e), a, "env", "Invalid environment variable name",
			"%q is not a valid environment variable name.", e) {
			p.env = val[[]string]{}
			break
		}
	}
	return p
}

func decodeComponentBlock(d *decoder, b *hcl.Block) *componentBlock {
	content, remain, diags := b.Body.PartialContent(schemaFor(b.Type))
	d.diags = append(d.diags, diags...)
	c := &componentBlock{
		kind:    b.Type,
		name:    b.Labels[0],
		rng:     b.DefRange,
		plugin:  d.str(content.Attributes, "plugin"),
		enabled: d.boolean(content.Attributes, "enabled"),
		remain:  remain,
	}
	if c.plugin.Set && !d.check(c.plugin.V != "", content.Attributes, "plugin", "Invalid value for plugin",
		"plugin must name a plugin, such as %q.", "openai") {
		c.plugin = val[string]{}
	}
	return c
}

func decodeModel(d *decoder, b *hcl.Block) *modelBlock {
	a := d.content(b, "model").Attributes
	m := &modelBlock{
		name:          b.Labels[0],
		rng:           b.DefRange,
		provider:      d.str(a, "provider"),
		id:            d.str(a, "id"),
		contextWindow: d.integer(a, "context_window", 1, math.MaxInt32, ""),
		inPrice:       d.num(a, "input_price_per_mtok", 0, 1e6),
		outPrice:      d.num(a, "output_price_per_mtok", 0, 1e6),
		fallback:      d.strList(a, "fallback"),
		seed:          d.integer(a, "seed", math.MinInt32, math.MaxInt32, ""),
	}
	for _, f := range m.fallback.V {
		if !d.check(f != m.name, a, "fallback", "Invalid fallback",
			"Model %q cannot fall back to itself.", m.name) {
			m.fallback = val[[]string]{}
			break
		}
	}
	return m
}

func decodePermissions(d *decoder, b *hcl.Block) *permissionsBlock {
	content := d.content(b, "permissions")
	a := content.Attributes
	p := &permissionsBlock{
		mode:        d.enum(a, "mode", permissionModes()),
		deniedPaths: d.strList(a, "denied_paths"),
	}
	if !d.globs(a, "denied_paths", p.deniedPaths.V) {
		p.deniedPaths = val[[]string]{}
	}
	for _, rb := range content.Blocks {
		if r, ok := decodeRule(d, rb); ok {
			p.rules = append(p.rules, r)
		}
	}
	return p
}

func decodeRule(d *decoder, b *hcl.Block) (ruleBlock, bool) {
	a := d.content(b, "permissions."+b.Type).Attributes
	r := Rule{
		Tools:     d.strList(a, "tools").V,
		Paths:     d.strList(a, "paths").V,
		Commands:  d.strList(a, "commands").V,
		Providers: d.strList(a, "providers").V,
		Surfaces:  d.strList(a, "surfaces").V,
		Reason:    d.str(a, "reason").V,
	}
	if !d.globs(a, "paths", r.Paths) {
		return ruleBlock{}, false
	}
	if len(r.Tools)+len(r.Paths)+len(r.Commands)+len(r.Providers)+len(r.Surfaces) == 0 {
		d.errorf(b.DefRange, "Empty "+b.Type+" rule",
			"An %s rule needs at least one of tools, paths, commands, providers or surfaces; it would match nothing.", b.Type)
		return ruleBlock{}, false
	}
	return ruleBlock{kind: b.Type, rng: b.DefRange, rule: r}, true
}

// globs checks that every pattern is a valid path glob.
func (d *decoder) globs(a hcl.Attributes, name string, patterns []string) bool {
	for _, p := range patterns {
		if !d.check(validGlob(p), a, name, "Invalid path pattern",
			"%q is not a valid glob (check its [ ] brackets).", p) {
			return false
		}
	}
	return true
}

func decodeAutonomy(d *decoder, b *hcl.Block) *autonomyBlock {
	a := d.content(b, "autonomy").Attributes
	attr, ok := a["level"]
	if !ok {
		return &autonomyBlock{}
	}
	v, ok := d.eval(attr, cty.DynamicPseudoType)
	if !ok {
		return &autonomyBlock{}
	}
	var s string
	switch v.Type() {
	case cty.String:
		s = v.AsString()
	case cty.Number:
		s = v.AsBigFloat().Text('g', -1)
	default:
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"autonomy level must be a number between 0 and 1 or one of supervised, trusted, autonomous.")
		return &autonomyBlock{}
	}
	level, err := ParseAutonomy(s)
	if err != nil {
		d.errorf(attr.Expr.Range(), "Invalid autonomy level", "%s.%s", err,
			didYouMean(s, []string{AutonomySupervised, AutonomyTrusted, AutonomyAutonomous}))
		return &autonomyBlock{}
	}
	return &autonomyBlock{level: val[float64]{V: level, Set: true, Range: attr.Range}}
}

func decodeBudget(d *decoder, b *hcl.Block) *budgetBlock {
	a := d.content(b, "budget").Attributes
	bb := &budgetBlock{
		maxUSD: d.num(a, "max_usd", 0, 1e9),
		maxTurns: d.integer(a, "max_turns", 1, MaxTurnsCap,
			" Sparrow stops every run at 60 turns; split a longer task into several runs."),
		maxTokens: d.integer(a, "max_tokens", 1, math.MaxInt32, ""),
	}
	if bb.maxUSD.Set && !d.check(bb.maxUSD.V > 0, a, "max_usd", "Value out of range",
		"max_usd must be greater than 0; leave it out for no spending limit.") {
		bb.maxUSD = val[float64]{}
	}
	return bb
}

func decodeRouting(d *decoder, b *hcl.Block) *routingBlock {
	content := d.content(b, "routing")
	r := &routingBlock{def: d.str(content.Attributes, "default")}
	seen := map[string]hcl.Range{}
	for _, rb := range content.Blocks {
		if !d.unique(seen, rb) {
			continue
		}
		a := d.content(rb, "routing.rule").Attributes
		rule := routingRuleBlock{name: rb.Labels[0], rng: rb.DefRange, match: d.str(a, "match"), model: d.str(a, "model")}
		if rule.match.Set {
			if _, err := regexp.Compile(rule.match.V); err != nil {
				d.errorf(a["match"].Expr.Range(), "Invalid match pattern",
					"%q is not a valid regular expression: %v.", rule.match.V, err)
				continue
			}
		}
		r.rules = append(r.rules, rule)
	}
	return r
}

func decodePolicy(d *decoder, b *hcl.Block) *policyBlock {
	content := d.content(b, "policy")
	a := content.Attributes
	p := &policyBlock{
		locked:              d.boolean(a, "locked"),
		requireSignatures:   d.boolean(a, "require_signatures"),
		wasmOnlyFromDataDir: d.boolean(a, "wasm_only_from_data_dir"),
		trustedKeys:         d.strList(a, "trusted_keys"),
	}
	seen := map[string]hcl.Range{}
	for _, cb := range content.Blocks {
		if !d.unique(seen, cb) {
			continue
		}
		ca := d.content(cb, "policy.max_capabilities").Attributes
		p.maxCaps = &maxCapsBlock{rng: cb.DefRange, network: d.boolean(ca, "network"),
			paths: d.strList(ca, "paths"), env: d.strList(ca, "env")}
	}
	for _, k := range p.trustedKeys.V {
		if !d.check(validKey(k), a, "trusted_keys", "Invalid trusted key",
			"%q is not an ed25519 public key; write \"ed25519:\" followed by the base64 of its 32 bytes.", truncate(k, 24)) {
			p.trustedKeys = val[[]string]{}
			break
		}
	}
	return p
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n]) + "…"
}
