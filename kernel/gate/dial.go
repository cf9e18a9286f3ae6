package gate

import (
	"fmt"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Band is a named range of the autonomy dial.
type Band string

// The dial's bands: supervised below 0.34, trusted below 0.67, autonomous
// from 0.67 (the same cut points as config.AutonomyName).
const (
	BandSupervised Band = "supervised"
	BandTrusted    Band = "trusted"
	BandAutonomous Band = "autonomous"
)

// BandOf returns the band an autonomy level falls in.
func BandOf(level float64) Band {
	switch {
	case level < 0.34:
		return BandSupervised
	case level < 0.67:
		return BandTrusted
	default:
		return BandAutonomous
	}
}

// ModeCeiling returns how far a permission mode lets the dial go, and
// whether the mode caps it at all.
//
// Decision: a mode is a ceiling, never a floor. The effective autonomy is
// min(dial, ceiling), with supervised capped at 0.33, trusted at 0.66 and
// autonomous at 1.0; so "autonomous" mode with the dial at 0.2 still asks
// before every change, and "supervised" mode with the dial at 0.9 still
// asks too. An empty mode (none configured) does not cap the dial.
// read-only, plan and emergency-stop are decided before the dial and have
// no ceiling.
func ModeCeiling(mode string) (float64, bool) {
	switch mode {
	case config.ModeSupervised:
		return 0.33, true
	case config.ModeTrusted:
		return 0.66, true
	case config.ModeAutonomous:
		return 1.0, true
	}
	return 0, false
}

// EffectiveAutonomy is the dial capped by the mode's ceiling.
func EffectiveAutonomy(mode string, dial float64) float64 {
	level := clamp(dial)
	if ceiling, ok := ModeCeiling(mode); ok && level > ceiling {
		level = ceiling
	}
	return level
}

// Table maps band × risk to a decision; it is the heart of the dial.
//
//	              read-only  mutating  exec   network  destructive
//	supervised    allow      ask       ask    ask      ask
//	trusted       allow      allow     allow  ask      ask
//	autonomous    allow      allow     allow  allow    allow + notify
//
// An unknown risk is treated as destructive. Every call that is not
// denied and may change the workspace also gets NeedsCheckpoint.
func Table(b Band, r tool.Risk) (d Decision, notify bool) {
	switch b {
	case BandSupervised:
		if r == tool.RiskReadOnly {
			return Allow, false
		}
		return Ask, false
	case BandTrusted:
		switch r {
		case tool.RiskReadOnly, tool.RiskMutating, tool.RiskExec:
			return Allow, false
		}
		return Ask, false
	default:
		switch r {
		case tool.RiskReadOnly, tool.RiskMutating, tool.RiskExec, tool.RiskNetwork:
			return Allow, false
		}
		return Allow, true
	}
}

// dial decides a call no rule matched.
func dial(p Policy, j judged) Verdict {
	level := EffectiveAutonomy(p.Mode, p.Autonomy)
	b := BandOf(level)
	d, notify := Table(b, j.risk)
	rule := fmt.Sprintf("autonomy %.2f × %s", level, j.risk)
	if level < clamp(p.Autonomy) {
		rule += fmt.Sprintf(" (capped by mode %s)", p.Mode)
	}
	verb := "allows"
	if d == Ask {
		verb = "asks before"
	}
	return Verdict{
		Decision:        d,
		NeedsCheckpoint: needsCheckpoint(j, d),
		Notify:          notify,
		Reason:          fmt.Sprintf("%s autonomy %s %s calls%s", b, verb, j.risk, j.because()),
		Rule:            rule,
		Risk:            j.risk,
	}
}

// riskRank orders risks: read-only < mutating < exec < network <
// destructive. An unknown risk ranks with destructive.
func riskRank(r tool.Risk) int {
	switch r {
	case tool.RiskReadOnly:
		return 0
	case tool.RiskMutating:
		return 1
	case tool.RiskExec:
		return 2
	case tool.RiskNetwork:
		return 3
	}
	return 4
}

// maxRisk returns the higher of two risks.
func maxRisk(a, b tool.Risk) tool.Risk {
	if riskRank(b) > riskRank(a) {
		return b
	}
	return a
}
