package config

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// DefaultSystemPolicyFile is the system-wide policy an administrator
// writes; users cannot loosen it.
const DefaultSystemPolicyFile = "/etc/sparrow/policy.hcl"

// applySystemPolicy reads the system-wide policy file, which may hold
// only a policy block, and binds it over every other layer: what it
// requires stays required, its trusted keys are the only trusted keys,
// and its capability bounds intersect the user's. A missing file is no
// system policy.
func applySystemPolicy(cfg *Config, path string, getenv func(string) string) hcl.Diagnostics {
	f, diags := readLayer(path, false, getenv)
	if f == nil || diags.HasErrors() {
		return diags
	}
	if f.hasMoreThanPolicy() {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Only a policy block belongs here",
			Detail:   fmt.Sprintf("%s is the system-wide policy: it may hold one policy block and nothing else.", path),
		})
	}
	if f.policy == nil {
		return diags
	}
	cfg.Policy.System = path
	m := &merger{cfg: cfg, src: SourceSystem, file: path, trusted: true}
	p, pol := f.policy, &cfg.Policy
	for _, r := range []struct {
		key string
		dst *bool
		v   val[bool]
	}{
		{"policy.locked", &pol.Locked, p.locked},
		{"policy.require_signatures", &pol.RequireSignatures, p.requireSignatures},
		{"policy.wasm_only_from_data_dir", &pol.WASMOnlyFromDataDir, p.wasmOnlyFromDataDir},
	} {
		if r.v.Set && r.v.V {
			set(m, r.key, r.dst, r.v)
		}
	}
	set(m, "policy.trusted_keys", &pol.TrustedKeys, p.trustedKeys)
	if mc := p.maxCaps; mc != nil {
		user := pol.MaxCapabilities
		caps := &MaxCapabilities{Network: true}
		if user != nil {
			caps = &MaxCapabilities{Network: user.Network, Paths: user.Paths, Env: user.Env}
		}
		if mc.network.Set && !mc.network.V {
			set(m, "policy.max_capabilities.network", &caps.Network, mc.network)
		}
		if mc.paths.Set {
			caps.Paths = intersect(caps.Paths, mc.paths.V)
			m.cfg.Origins["policy.max_capabilities.paths"] = m.origin(mc.paths.Range)
		}
		if mc.env.Set {
			caps.Env = intersect(caps.Env, mc.env.V)
			m.cfg.Origins["policy.max_capabilities.env"] = m.origin(mc.env.Range)
		}
		pol.MaxCapabilities = caps
	}
	return diags
}

// intersect bounds an allow-list by a binding one; nil allows anything.
func intersect(user, system []string) []string {
	if user == nil {
		return slices.Clone(system)
	}
	out := []string{}
	for _, s := range user {
		if slices.Contains(system, s) {
			out = append(out, s)
		}
	}
	return out
}

func (f *File) hasMoreThanPolicy() bool {
	t := f.top
	return t.model.Set || t.sandbox.Set || t.logLevel.Set || t.verifyCommand.Set || t.trustedProjects.Set || t.pluginMirrors.Set ||
		len(f.plugins)+len(f.components)+len(f.models) > 0 || f.permissions != nil || f.autonomy != nil ||
		f.budget != nil || f.routing != nil || f.checkpoints != nil
}
