package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Decision is what happens to a call.
type Decision string

// Decisions.
const (
	// Allow runs the call.
	Allow Decision = "allow"
	// Ask runs the call only if a person approves it.
	Ask Decision = "ask"
	// Deny refuses the call; the model is told why.
	Deny Decision = "deny"
)

// Verdict is the gate's answer for one call (or the Tracker's for a run).
type Verdict struct {
	// Decision is allow, ask or deny.
	Decision Decision
	// NeedsCheckpoint is set when the call may change the workspace and is
	// not denied: the engine snapshots the workspace before running it.
	NeedsCheckpoint bool
	// Notify asks the surfaces to tell the user even though the call is
	// allowed (a destructive call in autonomous mode, say).
	Notify bool
	// Reason is one lower-case sentence for the user and the model.
	Reason string
	// Rule names what decided: "mode read-only", "deny rule #2
	// (sparrow.hcl:14)", "default denied path .env", "autonomy 0.50 ×
	// exec", "hard stop: max turns", ….
	Rule string
	// Risk is the effective risk: the declared risk, raised by shell
	// analysis for calls that carry a command line.
	Risk tool.Risk
	// HardStop means the run must stop now, not just this call.
	HardStop bool
	// Network is set on a verdict that is not a deny for a call that
	// reaches the network: its declared risk is network, or shell
	// analysis found a command that talks to a remote, even when another
	// risk ranks higher. Sandboxes with network control get network for
	// such a call only, once it is allowed.
	Network bool
}

// Policy is the permission configuration one Gate enforces.
type Policy struct {
	// Mode is one of the config.Mode* constants. Empty means no mode was
	// chosen: the dial alone decides (see [PolicyFromConfig]).
	Mode string
	// Autonomy is the dial, in [0, 1].
	Autonomy float64
	// Workspace is the workspace root; [New] makes it absolute and
	// resolves its symlinks. Empty means the current directory.
	Workspace string
	// DeniedPaths are names or globs matched against every path component
	// (or, for entries containing a slash, against the workspace-relative
	// path). [New] always adds config.DefaultDeniedPaths.
	DeniedPaths []string
	// Allow, Ask and Deny are the permission rules, in definition order.
	Allow, Ask, Deny []config.Rule
}

// PolicyFromConfig builds the policy for a workspace from merged config.
// A permission mode that only the built-in defaults set does not cap the
// dial: the dial alone decides, so `autonomy { level = "trusted" }` means
// what it says. A mode set by a file, the environment or a flag (or by a
// caller that builds a Config without origins) caps it.
func PolicyFromConfig(cfg *config.Config, workspace string) Policy {
	mode := cfg.Permissions.Mode
	if o, ok := cfg.Origins["permissions.mode"]; ok && o.Source == config.SourceDefault {
		mode = ""
	}
	return Policy{
		Mode:        mode,
		Autonomy:    cfg.Autonomy.Level,
		Workspace:   workspace,
		DeniedPaths: slices.Clone(cfg.Permissions.DeniedPaths),
		Allow:       slices.Clone(cfg.Permissions.Allow),
		Ask:         slices.Clone(cfg.Permissions.Ask),
		Deny:        slices.Clone(cfg.Permissions.Deny),
	}
}

// Call is a tool call as the gate sees it.
type Call struct {
	// Tool is the tool's name.
	Tool string
	// Risk is the risk the tool declares.
	Risk tool.Risk
	// Arguments are the decoded JSON arguments.
	Arguments map[string]any
	// PathArguments name the arguments that hold paths (a string or a
	// list of strings each).
	PathArguments []string
	// Command is the command line of shell-like calls, empty otherwise.
	Command string
	// Workdir is the directory a command runs in, if the caller knows it
	// apart from the arguments; it is checked like a path argument.
	Workdir string
	// Provider and Surface name the model provider and the surface the
	// call came through, for rules that match on them.
	Provider, Surface string
}

// Gate decides calls under one policy. It is safe for concurrent use.
type Gate struct {
	mu sync.RWMutex
	p  Policy
	// denied are the denied-path entries, defaults first.
	denied []deniedEntry
	// globs are the rules' and denied paths' "**" globs, compiled.
	globs globs
}

// New returns a gate for p. The workspace is made absolute and its
// symlinks resolved once; the default denied paths are always added.
func New(p Policy) *Gate {
	if abs, err := filepath.Abs(p.Workspace); err == nil {
		p.Workspace = abs
	}
	if real, err := filepath.EvalSymlinks(p.Workspace); err == nil {
		p.Workspace = real
	}
	p.Autonomy = clamp(p.Autonomy)
	p.DeniedPaths = slices.Clone(p.DeniedPaths)
	p.Allow, p.Ask, p.Deny = slices.Clone(p.Allow), slices.Clone(p.Ask), slices.Clone(p.Deny)
	denied := deniedEntries(p.DeniedPaths)
	return &Gate{p: p, denied: denied, globs: compileGlobs(ruleGlobs(p), deniedGlobs(denied))}
}

// SetAutonomy moves the dial to level, clamped to [0, 1]. The engine
// emits AutonomyChanged; the gate only applies it.
func (g *Gate) SetAutonomy(level float64) {
	g.mu.Lock()
	g.p.Autonomy = clamp(level)
	g.mu.Unlock()
}

// Autonomy returns the dial's current level (before the mode's cap).
func (g *Gate) Autonomy() float64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.p.Autonomy
}

func clamp(level float64) float64 { return min(max(level, 0), 1) }

// Decide judges one call: emergency stop, shell analysis, paths, mode,
// rules, then the dial. It does not consult the run's Tracker; the engine
// asks Tracker.Check first and calls Decide only when that allows.
func (g *Gate) Decide(c Call) Verdict {
	g.mu.RLock()
	p := g.p
	g.mu.RUnlock()
	if p.Mode == config.ModeEmergencyStop {
		return Verdict{Decision: Deny, HardStop: true, Risk: c.Risk, Rule: "mode emergency-stop",
			Reason: "emergency stop is on: nothing runs"}
	}
	j := judgeCall(c)
	if v, stop := g.checkPaths(p, c, j); stop {
		return v
	}
	// plan is read-only as far as the gate is concerned: the model may look
	// around and propose, not change anything. What differs is the
	// engine's instructions to the model, not the gate.
	if (p.Mode == config.ModeReadOnly || p.Mode == config.ModePlan) && j.risk != tool.RiskReadOnly {
		return Verdict{Decision: Deny, Risk: j.risk, Rule: "mode " + p.Mode,
			Reason: fmt.Sprintf("%s mode only allows read-only calls; this one is %s%s", p.Mode, j.risk, j.because())}
	}
	v, ok := matchRules(p, g.globs, c, j)
	if !ok {
		v = dial(p, j)
	}
	if j.unparsed && v.Decision == Allow {
		v.Decision, v.Notify = Ask, false
		v.Rule = "shell analysis: cannot parse"
		v.Reason = fmt.Sprintf("the command cannot be parsed (%v), so a person must approve it", j.parseErr)
	}
	v.Network = j.network && v.Decision != Deny
	return v
}

// judged is a call's effective risk and what shell analysis found.
type judged struct {
	declared tool.Risk
	risk     tool.Risk
	// command is set for calls that carry a command line.
	command bool
	// top explains the riskiest shell command, "" for other calls.
	top string
	// commands are the simple commands of the command line.
	commands [][]string
	// words are the command line's words that may name files.
	words    []string
	unparsed bool
	parseErr error
	// network is set when the call reaches the network: declared so, or
	// a command of its line talks to a remote.
	network bool
}

func (j judged) because() string {
	if j.top == "" {
		return ""
	}
	return " (" + j.top + ")"
}

// judgeCall finds a call's effective risk. For a call with a command
// line, shell analysis decides: a declared exec (what a shell tool says
// because it can run anything) is replaced by what the line actually
// runs, so `git status` is read-only; any other declared risk stays a
// floor. An unparsable line is destructive and keeps its raw words for
// the denied-path check.
func judgeCall(c Call) judged {
	j := judged{declared: c.Risk, risk: c.Risk, command: c.Command != "", network: c.Risk == tool.RiskNetwork}
	if j.risk == "" {
		j.risk = tool.RiskExec
	}
	if c.Command == "" {
		return j
	}
	a, err := analyze(c.Command)
	if err != nil {
		j.unparsed, j.parseErr = true, err
		j.risk, j.top = tool.RiskDestructive, "cannot parse: "+err.Error()
		j.words = rawWords(c.Command)
		return j
	}
	if j.risk == tool.RiskExec {
		j.risk = a.risk
	} else {
		j.risk = maxRisk(j.risk, a.risk)
	}
	if a.risk == j.risk {
		j.top = a.top
	}
	j.commands, j.words = a.commands, a.words
	j.network = j.network || a.network
	return j
}

// needsCheckpoint reports whether a call that is not denied may change the
// workspace: its effective risk is mutating, exec or destructive, or it
// is a command line with network risk (git pull, npm install still run a
// program that writes). A pure network tool (web fetch) is not.
func needsCheckpoint(j judged, d Decision) bool {
	if d == Deny {
		return false
	}
	switch j.risk {
	case tool.RiskMutating, tool.RiskExec, tool.RiskDestructive:
		return true
	case tool.RiskNetwork:
		return j.command
	}
	return false
}
