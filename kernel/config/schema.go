package config

import "github.com/hashicorp/hcl/v2"

// componentKinds are the block types whose plugin-specific remainder is
// kept raw for the plugin's own schema.
func componentKinds() []string {
	return []string{"provider", "sandbox", "tool", "surface"}
}

func attrs(names ...string) []hcl.AttributeSchema {
	out := make([]hcl.AttributeSchema, len(names))
	for i, n := range names {
		out[i] = hcl.AttributeSchema{Name: n}
	}
	return out
}

// schemas returns every body schema the parser knows, keyed by the dotted
// block path ("" is the file's root body). Component schemas list only the
// attributes Sparrow itself reads; the rest belongs to the plugin.
func schemas() map[string]*hcl.BodySchema {
	rule := &hcl.BodySchema{Attributes: attrs("tools", "paths", "commands", "providers", "surfaces", "reason")}
	component := &hcl.BodySchema{Attributes: attrs("plugin", "enabled")}
	return map[string]*hcl.BodySchema{
		"": {
			Attributes: attrs("model", "sandbox", "log_level", "verify_command", "trusted_projects", "plugin_mirrors"),
			Blocks: []hcl.BlockHeaderSchema{
				{Type: "plugin", LabelNames: []string{"name"}},
				{Type: "provider", LabelNames: []string{"name"}},
				{Type: "sandbox", LabelNames: []string{"name"}},
				{Type: "tool", LabelNames: []string{"name"}},
				{Type: "surface", LabelNames: []string{"name"}},
				{Type: "model", LabelNames: []string{"name"}},
				{Type: "permissions"},
				{Type: "autonomy"},
				{Type: "budget"},
				{Type: "routing"},
				{Type: "policy"},
				{Type: "checkpoints"},
			},
		},
		"plugin":   {Attributes: attrs("source", "version", "sha256", "env", "enabled")},
		"provider": component,
		"sandbox":  component,
		"tool":     component,
		"surface":  component,
		"model": {Attributes: attrs("provider", "id", "context_window",
			"input_price_per_mtok", "output_price_per_mtok", "fallback", "seed")},
		"permissions": {
			Attributes: attrs("mode", "denied_paths"),
			Blocks:     []hcl.BlockHeaderSchema{{Type: "allow"}, {Type: "ask"}, {Type: "deny"}},
		},
		"permissions.allow": rule,
		"permissions.ask":   rule,
		"permissions.deny":  rule,
		"autonomy":          {Attributes: attrs("level")},
		"budget":            {Attributes: attrs("max_usd", "max_turns", "max_tokens")},
		"routing": {
			Attributes: attrs("default"),
			Blocks:     []hcl.BlockHeaderSchema{{Type: "rule", LabelNames: []string{"name"}}},
		},
		"routing.rule": {Attributes: attrs("match", "model")},
		"checkpoints":  {Attributes: attrs("retention", "max_file_mb", "rollback_failed")},
		"policy": {
			Attributes: attrs("locked", "trusted_keys", "require_signatures", "wasm_only_from_data_dir"),
			Blocks:     []hcl.BlockHeaderSchema{{Type: "max_capabilities"}},
		},
		"policy.max_capabilities": {Attributes: attrs("network", "paths", "env")},
	}
}

// schemaFor returns the schema of a block path; it panics on a path the
// package does not define, which is a programming error.
func schemaFor(path string) *hcl.BodySchema {
	s, ok := schemas()[path]
	if !ok {
		panic("config: no schema for block " + path)
	}
	return s
}
