package gate

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// matchRules applies config rules: deny wins over ask, ask over allow.
func matchRules(p Policy, c Call, risk tool.Risk) (Verdict, bool) {
	var commands [][]string
	if c.Command != "" {
		_, commands, _, _ = analyze(c.Command)
	}
	for _, set := range []struct {
		kind  string
		rules []config.Rule
		d     Decision
	}{{"deny", p.Deny, Deny}, {"ask", p.Ask, Ask}, {"allow", p.Allow, Allow}} {
		for i, r := range set.rules {
			if !ruleMatches(p, r, c, commands) {
				continue
			}
			v := Verdict{Decision: set.d, Risk: risk, NeedsCheckpoint: needsCheckpoint(risk) && set.d != Deny,
				Rule: ruleName(set.kind, i, r)}
			v.Reason = r.Reason
			if v.Reason == "" {
				v.Reason = fmt.Sprintf("a %s rule matches", set.kind)
			}
			return v, true
		}
	}
	return Verdict{}, false
}

func ruleName(kind string, i int, r config.Rule) string {
	name := fmt.Sprintf("%s rule #%d", kind, i+1)
	if r.Origin.File != "" {
		name += fmt.Sprintf(" (%s:%d)", filepath.Base(r.Origin.File), r.Origin.Line)
	}
	return name
}

// ruleMatches requires every field the rule sets to match.
func ruleMatches(p Policy, r config.Rule, c Call, commands [][]string) bool {
	if len(r.Tools) == 0 && len(r.Paths) == 0 && len(r.Commands) == 0 && len(r.Providers) == 0 && len(r.Surfaces) == 0 {
		return false
	}
	if len(r.Tools) > 0 && !anyGlob(r.Tools, c.Tool) {
		return false
	}
	if len(r.Providers) > 0 && !anyGlob(r.Providers, c.Provider) {
		return false
	}
	if len(r.Surfaces) > 0 && !anyGlob(r.Surfaces, c.Surface) {
		return false
	}
	if len(r.Paths) > 0 && !pathsMatch(p, r.Paths, c) {
		return false
	}
	if len(r.Commands) > 0 && !commandsMatch(r.Commands, commands) {
		return false
	}
	return true
}

func anyGlob(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok {
			return true
		}
	}
	return false
}

// pathsMatch is true when any path argument matches any glob, in its
// workspace-relative form ("**" matches any number of directories).
func pathsMatch(p Policy, globs []string, c Call) bool {
	for _, name := range c.PathArguments {
		v, ok := c.Arguments[name].(string)
		if !ok {
			continue
		}
		rel, err := filepath.Rel(p.Workspace, resolve(p.Workspace, v))
		if err != nil {
			continue
		}
		for _, g := range globs {
			if globMatch(g, filepath.ToSlash(rel)) {
				return true
			}
		}
	}
	return false
}

// globMatch is path.Match with "**" spanning directories.
func globMatch(glob, p string) bool {
	if !strings.Contains(glob, "**") {
		ok, _ := path.Match(glob, p)
		return ok
	}
	prefix, suffix, _ := strings.Cut(glob, "**")
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	rest := strings.TrimPrefix(p, prefix)
	suffix = strings.TrimPrefix(suffix, "/")
	if suffix == "" {
		return true
	}
	parts := strings.Split(rest, "/")
	for i := range parts {
		if globMatch(suffix, strings.Join(parts[i:], "/")) {
			return true
		}
	}
	return false
}

// commandsMatch is true when a simple command starts with any prefix.
func commandsMatch(prefixes []string, commands [][]string) bool {
	for _, cmd := range commands {
		line := strings.Join(cmd, " ")
		for _, pre := range prefixes {
			if line == pre || strings.HasPrefix(line, pre+" ") {
				return true
			}
		}
	}
	return false
}
