package gate

import (
	"fmt"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Mode ceilings: a permission mode caps the dial. supervised caps it at
// 0.33, trusted at 0.66, autonomous leaves it as set; no mode (the
// default) leaves the dial alone. read-only, plan and emergency-stop are
// handled before the dial.
var modeCeiling = map[string]float64{
	config.ModeSupervised: 0.33,
	config.ModeTrusted:    0.66,
	config.ModeAutonomous: 1.0,
}

// band names the dial's three bands.
func band(level float64) string {
	switch {
	case level < 0.34:
		return "supervised"
	case level < 0.67:
		return "trusted"
	default:
		return "autonomous"
	}
}

// table maps band × risk to a decision:
//
//	              read-only  mutating  exec   network  destructive
//	supervised    allow      ask       ask    ask      ask
//	trusted       allow      allow     allow  ask      ask
//	autonomous    allow      allow     allow  allow    allow+notify
var table = map[string]map[tool.Risk]Decision{
	"supervised": {tool.RiskReadOnly: Allow, tool.RiskMutating: Ask, tool.RiskExec: Ask, tool.RiskNetwork: Ask, tool.RiskDestructive: Ask},
	"trusted":    {tool.RiskReadOnly: Allow, tool.RiskMutating: Allow, tool.RiskExec: Allow, tool.RiskNetwork: Ask, tool.RiskDestructive: Ask},
	"autonomous": {tool.RiskReadOnly: Allow, tool.RiskMutating: Allow, tool.RiskExec: Allow, tool.RiskNetwork: Allow, tool.RiskDestructive: Allow},
}

// effectiveAutonomy is the dial, capped by the mode.
func effectiveAutonomy(p Policy) float64 {
	level := p.Autonomy
	if ceiling, ok := modeCeiling[p.Mode]; ok && level > ceiling {
		level = ceiling
	}
	return level
}

func dial(p Policy, risk tool.Risk) Verdict {
	level := effectiveAutonomy(p)
	b := band(level)
	d, ok := table[b][risk]
	if !ok {
		d = Ask
	}
	v := Verdict{Decision: d, Risk: risk, Rule: fmt.Sprintf("autonomy %.2f × %s", level, risk),
		NeedsCheckpoint: needsCheckpoint(risk)}
	switch d {
	case Allow:
		v.Reason = fmt.Sprintf("%s autonomy allows %s calls", b, risk)
		v.Notify = risk == tool.RiskDestructive
	case Ask:
		v.Reason = fmt.Sprintf("%s autonomy asks before %s calls", b, risk)
	}
	return v
}

func needsCheckpoint(r tool.Risk) bool {
	return r == tool.RiskMutating || r == tool.RiskExec || r == tool.RiskDestructive
}

// riskOrder ranks risks for taking the maximum.
var riskOrder = map[tool.Risk]int{tool.RiskReadOnly: 0, tool.RiskMutating: 1, tool.RiskExec: 2, tool.RiskNetwork: 3, tool.RiskDestructive: 4}

func maxRisk(a, b tool.Risk) tool.Risk {
	if riskOrder[b] > riskOrder[a] {
		return b
	}
	return a
}
