package gate

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// matchRules applies the permission rules: every deny rule first, then
// every ask rule, then every allow rule, each kind in definition order;
// the first rule that matches decides.
func matchRules(p Policy, gs globs, c Call, j judged) (Verdict, bool) {
	kinds := []struct {
		kind  string
		rules []config.Rule
		d     Decision
	}{{"deny", p.Deny, Deny}, {"ask", p.Ask, Ask}, {"allow", p.Allow, Allow}}
	for _, k := range kinds {
		for i, r := range k.rules {
			if !ruleMatches(p, gs, r, c, j, k.d == Allow) {
				continue
			}
			v := Verdict{
				Decision:        k.d,
				NeedsCheckpoint: needsCheckpoint(j, k.d),
				Notify:          k.d == Allow && j.risk == tool.RiskDestructive,
				Rule:            RuleName(k.kind, i, r),
				Risk:            j.risk,
				Reason:          r.Reason,
			}
			if v.Reason == "" {
				v.Reason = fmt.Sprintf("%s %ss this %s call%s", v.Rule, k.kind, j.risk, j.because())
			}
			return v, true
		}
	}
	return Verdict{}, false
}

// RuleName names a rule for Verdict.Rule: its kind, its 1-based index
// among rules of that kind, and where it was defined, as in
// "deny rule #2 (sparrow.hcl:14)".
func RuleName(kind string, i int, r config.Rule) string {
	name := fmt.Sprintf("%s rule #%d", kind, i+1)
	switch {
	case r.Origin.File != "":
		name += fmt.Sprintf(" (%s:%d)", filepath.Base(r.Origin.File), r.Origin.Line)
	case r.Origin.EnvVar != "":
		name += " (env " + r.Origin.EnvVar + ")"
	case r.Origin.Flag != "":
		name += " (flag --" + r.Origin.Flag + ")"
	}
	return name
}

// ruleMatches requires every field the rule sets to match; a rule that
// sets no field matches nothing. For allow rules, a command prefix must
// cover every simple command of the line (so allowing "go test" does not
// allow "go test && rm -rf ."); for ask and deny rules one is enough.
func ruleMatches(p Policy, gs globs, r config.Rule, c Call, j judged, allow bool) bool {
	if len(r.Tools) == 0 && len(r.Paths) == 0 && len(r.Commands) == 0 && len(r.Providers) == 0 && len(r.Surfaces) == 0 {
		return false
	}
	switch {
	case len(r.Tools) > 0 && !anyGlob(r.Tools, c.Tool),
		len(r.Providers) > 0 && !anyGlob(r.Providers, c.Provider),
		len(r.Surfaces) > 0 && !anyGlob(r.Surfaces, c.Surface),
		len(r.Paths) > 0 && !pathsMatch(p, gs, r.Paths, c),
		len(r.Commands) > 0 && !commandsMatch(r.Commands, j.commands, allow):
		return false
	}
	return true
}

// anyGlob reports whether s matches any glob (path.Match syntax).
func anyGlob(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok || g == s {
			return true
		}
	}
	return false
}

// pathsMatch reports whether any path of the call matches any glob, in
// its workspace-relative or its absolute form.
func pathsMatch(p Policy, gs globs, patterns []string, c Call) bool {
	for _, a := range pathArgs(c) {
		abs := resolve(p.Workspace, a.value)
		forms := []string{filepath.ToSlash(abs)}
		if rel, err := filepath.Rel(p.Workspace, abs); err == nil && inside(p.Workspace, abs) {
			forms = append(forms, filepath.ToSlash(rel))
		}
		for _, g := range patterns {
			for _, f := range forms {
				if gs.match(filepath.ToSlash(g), f) {
					return true
				}
			}
		}
	}
	return false
}

// globs holds the compiled expressions of "**" globs, so a decision does
// not compile one per glob per path. It is built once and only read; a
// glob missing from it is compiled when matched.
type globs map[string]*regexp.Regexp

// ruleGlobs lists the path globs of every rule, in the form they are
// matched in.
func ruleGlobs(p Policy) []string {
	var out []string
	for _, rules := range [][]config.Rule{p.Deny, p.Ask, p.Allow} {
		for _, r := range rules {
			for _, g := range r.Paths {
				out = append(out, filepath.ToSlash(g))
			}
		}
	}
	return out
}

// compileGlobs compiles every "**" glob in the lists; a malformed one maps
// to nil.
func compileGlobs(lists ...[]string) globs {
	gs := globs{}
	for _, l := range lists {
		for _, g := range l {
			if strings.Contains(g, "**") {
				gs[g], _ = regexp.Compile(globRegexp(g))
			}
		}
	}
	return gs
}

// match is path.Match where "**" spans any number of directories:
// "docs/**" matches "docs" and "docs/a/b.md", "**/*.pem" matches "k.pem"
// and "a/b/k.pem". A malformed glob matches nothing.
func (gs globs) match(glob, p string) bool {
	if !strings.Contains(glob, "**") {
		ok, _ := path.Match(glob, p)
		return ok
	}
	re, ok := gs[glob]
	if !ok {
		re, _ = regexp.Compile(globRegexp(glob))
	}
	return re != nil && re.MatchString(p)
}

// globRegexp translates a glob with "**" into an anchored regexp.
func globRegexp(glob string) string {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "/**") && i+3 == len(glob):
			b.WriteString("(?:/.*)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end + 1
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// commandsMatch checks command prefixes against the simple commands of a
// line, word by word ("go test" matches "go test ./..." but not "go
// testify"). With all set every command must match some prefix.
func commandsMatch(prefixes []string, commands [][]string, all bool) bool {
	if len(commands) == 0 {
		return false
	}
	for _, cmd := range commands {
		line := strings.Join(cmd, " ")
		hit := false
		for _, pre := range prefixes {
			pre = strings.Join(strings.Fields(pre), " ")
			if pre != "" && (line == pre || strings.HasPrefix(line, pre+" ")) {
				hit = true
				break
			}
		}
		switch {
		case hit && !all:
			return true
		case !hit && all:
			return false
		}
	}
	return all
}
