package cli

import (
	"fmt"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
)

// policySummary says in one line which plugin policy is in force and
// where it was set: `plugin list` and `doctor` show it.
func policySummary(cfg *config.Config) string {
	p := cfg.Policy
	var rules []string
	if p.Locked {
		rules = append(rules, "locked to the lock file")
	}
	if p.RequireSignatures {
		rules = append(rules, fmt.Sprintf("signatures required (%d trusted key(s))", len(p.TrustedKeys)))
	}
	if p.WASMOnlyFromDataDir {
		rules = append(rules, "WASM only from installed plugins")
	}
	if mc := p.MaxCapabilities; mc != nil {
		var caps []string
		if !mc.Network {
			caps = append(caps, "no network")
		}
		if mc.Env != nil {
			caps = append(caps, "env ⊆ ["+strings.Join(mc.Env, ", ")+"]")
		}
		if mc.Paths != nil {
			caps = append(caps, "paths ⊆ ["+strings.Join(mc.Paths, ", ")+"]")
		}
		if len(caps) > 0 {
			rules = append(rules, "capabilities: "+strings.Join(caps, ", "))
		}
	}
	if len(rules) == 0 {
		return "policy: open (any discovered plugin may load; see `policy` in sparrow.hcl.example)"
	}
	s := "policy: " + strings.Join(rules, "; ")
	if p.System != "" {
		s += " — binding system policy " + p.System
	}
	return s
}
