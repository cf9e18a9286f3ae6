package gate

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Decision is what happens to a call.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Verdict is the gate's rich answer.
type Verdict struct {
	Decision Decision
	// NeedsCheckpoint is set for calls that may change the workspace.
	NeedsCheckpoint bool
	// Notify asks the surfaces to tell the user even though it is allowed.
	Notify bool
	// Reason is one sentence for the user and the model.
	Reason string
	// Rule names what decided.
	Rule string
	// Risk is the effective risk, after shell analysis.
	Risk tool.Risk
	// HardStop ends the run.
	HardStop bool
}

// Policy is the permission configuration the gate enforces.
type Policy struct {
	Mode      string
	Autonomy  float64
	Workspace string
	// DeniedPaths are names or globs matched against every path component.
	DeniedPaths      []string
	Allow, Ask, Deny []config.Rule
}

// PolicyFromConfig builds the policy for a workspace from merged config.
// A permission mode nobody set does not cap the dial: the dial alone
// decides, so `autonomy { level = "trusted" }` means what it says.
func PolicyFromConfig(cfg *config.Config, workspace string) Policy {
	denied := append(config.DefaultDeniedPaths(), cfg.Permissions.DeniedPaths...)
	mode := cfg.Permissions.Mode
	if o, ok := cfg.Origins["permissions.mode"]; !ok || o.Source == config.SourceDefault {
		mode = ""
	}
	return Policy{Mode: mode, Autonomy: cfg.Autonomy.Level, Workspace: workspace,
		DeniedPaths: denied, Allow: cfg.Permissions.Allow, Ask: cfg.Permissions.Ask, Deny: cfg.Permissions.Deny}
}

// Call is a tool call as the gate sees it.
type Call struct {
	Tool string
	// Risk is what the tool declares.
	Risk          tool.Risk
	Arguments     map[string]any
	PathArguments []string
	// Command is the command line of shell-like calls.
	Command  string
	Provider string
	Surface  string
}

// Gate decides calls under one policy. Safe for concurrent use.
type Gate struct {
	mu sync.RWMutex
	p  Policy
}

// New returns a gate for p. The workspace is resolved once, symlinks
// followed.
func New(p Policy) *Gate {
	if ws, err := filepath.EvalSymlinks(p.Workspace); err == nil {
		p.Workspace = ws
	}
	return &Gate{p: p}
}

// SetAutonomy moves the dial.
func (g *Gate) SetAutonomy(level float64) {
	g.mu.Lock()
	g.p.Autonomy = min(max(level, 0), 1)
	g.mu.Unlock()
}

// Decide judges one call.
func (g *Gate) Decide(c Call) Verdict {
	g.mu.RLock()
	p := g.p
	g.mu.RUnlock()
	risk := c.Risk
	var shellWords []string
	if c.Command != "" {
		r, _, words, err := analyze(c.Command)
		if err != nil {
			return Verdict{Decision: Deny, Risk: tool.RiskDestructive, Rule: "shell analysis",
				Reason: fmt.Sprintf("the command cannot be parsed (%v), so it is not run", err)}
		}
		risk = maxRisk(risk, r)
		shellWords = words
	}
	if v, stop := checkPaths(p, c, risk, shellWords); stop {
		return v
	}
	switch p.Mode {
	case config.ModeEmergencyStop:
		return Verdict{Decision: Deny, Risk: risk, Rule: "mode emergency-stop", Reason: "emergency stop: nothing runs"}
	case config.ModeReadOnly, config.ModePlan:
		if risk != tool.RiskReadOnly {
			return Verdict{Decision: Deny, Risk: risk, Rule: "mode " + p.Mode,
				Reason: fmt.Sprintf("%s mode only allows read-only calls; this one is %s", p.Mode, risk)}
		}
	}
	if v, ok := matchRules(p, c, risk); ok {
		return v
	}
	return dial(p, risk)
}

// checkPaths refuses path arguments outside the workspace or on denied
// paths. A write outside the workspace is a hard stop.
func checkPaths(p Policy, c Call, risk tool.Risk, shellWords []string) (Verdict, bool) {
	for _, name := range c.PathArguments {
		v, ok := c.Arguments[name].(string)
		if !ok || v == "" {
			continue
		}
		abs := resolve(p.Workspace, v)
		if !inside(p.Workspace, abs) {
			write := risk != tool.RiskReadOnly
			return Verdict{Decision: Deny, Risk: risk, HardStop: write, Rule: "outside workspace",
				Reason: fmt.Sprintf("%s resolves outside the workspace", v)}, true
		}
		rel, _ := filepath.Rel(p.Workspace, abs)
		if d := deniedComponent(p.DeniedPaths, v, rel); d != "" {
			return Verdict{Decision: Deny, Risk: risk, Rule: "denied path " + d,
				Reason: fmt.Sprintf("%s is a denied path", v)}, true
		}
	}
	for _, w := range shellWords {
		if d := deniedComponent(p.DeniedPaths, w, ""); d != "" {
			return Verdict{Decision: Deny, Risk: risk, Rule: "denied path " + d,
				Reason: fmt.Sprintf("the command touches %s, a denied path", w)}, true
		}
	}
	return Verdict{}, false
}

// resolve makes a path absolute against the workspace and follows the
// symlinks of its longest existing prefix, so a link pointing out is seen.
func resolve(ws, p string) string {
	if strings.HasPrefix(p, "~/") {
		return "/nonexistent-home/" + p[2:] // home is never inside a workspace
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		if cur == filepath.Dir(cur) {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

func inside(ws, abs string) bool {
	rel, err := filepath.Rel(ws, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// deniedComponent returns the denied entry any component of the given
// paths matches, or "".
func deniedComponent(denied []string, paths ...string) string {
	for _, p := range paths {
		for _, comp := range strings.Split(filepath.ToSlash(p), "/") {
			if comp == "" || comp == "." || comp == ".." {
				continue
			}
			for _, d := range denied {
				if ok, _ := path.Match(d, comp); ok || comp == d {
					return d
				}
			}
		}
	}
	return ""
}
