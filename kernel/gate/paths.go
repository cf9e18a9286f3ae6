package gate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// maxLinks bounds symlink resolution, like the kernel's ELOOP.
const maxLinks = 40

// deniedEntry is one denied path, and whether it is a built-in default.
type deniedEntry struct {
	pattern   string
	isDefault bool
}

// deniedEntries merges the defaults with the configured entries, defaults
// first and without duplicates.
func deniedEntries(configured []string) []deniedEntry {
	var out []deniedEntry
	seen := map[string]bool{}
	for _, d := range config.DefaultDeniedPaths() {
		seen[d] = true
		out = append(out, deniedEntry{pattern: d, isDefault: true})
	}
	for _, d := range configured {
		d = strings.TrimSuffix(filepath.ToSlash(strings.TrimSpace(d)), "/")
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, deniedEntry{pattern: d})
	}
	return out
}

// deniedGlobs lists the entries' patterns in the form deniedMatch
// matches them in.
func deniedGlobs(entries []deniedEntry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, strings.Trim(e.pattern, "/"))
	}
	return out
}

func (e deniedEntry) rule() string {
	if e.isDefault {
		return "default denied path " + e.pattern
	}
	return "denied path " + e.pattern
}

// pathArg is one path a call names.
type pathArg struct {
	name, value string
}

// pathArgs lists the call's workdir and every string (or list of strings)
// held by a path argument.
func pathArgs(c Call) []pathArg {
	var out []pathArg
	if c.Workdir != "" {
		out = append(out, pathArg{"workdir", c.Workdir})
	}
	for _, name := range c.PathArguments {
		switch v := c.Arguments[name].(type) {
		case string:
			if v != "" {
				out = append(out, pathArg{name, v})
			}
		case []string:
			for _, s := range v {
				out = append(out, pathArg{name, s})
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && s != "" {
					out = append(out, pathArg{name, s})
				}
			}
		}
	}
	return out
}

// checkPaths refuses a call whose paths leave the workspace or touch a
// denied path. A write (mutating or destructive risk) outside the
// workspace is a hard stop; a read or an exec there is only refused.
func (g *Gate) checkPaths(p Policy, c Call, j judged) (Verdict, bool) {
	for _, a := range pathArgs(c) {
		abs := resolve(p.Workspace, a.value)
		out := !inside(p.Workspace, abs)
		if out && (j.risk == tool.RiskMutating || j.risk == tool.RiskDestructive) {
			return Verdict{Decision: Deny, HardStop: true, Risk: j.risk, Rule: "hard stop: write outside workspace",
				Reason: fmt.Sprintf("%s %q resolves to %s, outside the workspace, and this call writes", a.name, a.value, abs)}, true
		}
		// Inside, only the workspace-relative forms count, so a workspace
		// that itself lives below a denied name is still usable.
		forms := []string{a.value, abs}
		if !out {
			rel, _ := filepath.Rel(p.Workspace, abs)
			forms = []string{rel}
			if !filepath.IsAbs(a.value) {
				forms = append(forms, a.value)
			}
		}
		if e, ok := g.deniedPath(forms...); ok {
			return Verdict{Decision: Deny, Risk: j.risk, Rule: e.rule(),
				Reason: fmt.Sprintf("%s %q is a denied path", a.name, a.value)}, true
		}
		if out {
			return Verdict{Decision: Deny, Risk: j.risk, Rule: "outside workspace",
				Reason: fmt.Sprintf("%s %q resolves to %s, outside the workspace", a.name, a.value, abs)}, true
		}
	}
	for _, w := range j.words {
		if e, ok := g.deniedPath(w); ok {
			return Verdict{Decision: Deny, Risk: j.risk, Rule: e.rule(),
				Reason: fmt.Sprintf("the command names %q, a denied path", w)}, true
		}
	}
	return Verdict{}, false
}

// DeniedMatcher reports whether a workspace-relative path (slash- or
// OS-separated) is denied by the defaults plus configured, by the same
// rule the gate applies to a call's path arguments. Runtimes that give
// tools a view of the workspace (WASM tools) hide such paths. It touches
// no file system and is safe for concurrent use.
func DeniedMatcher(configured []string) func(rel string) bool {
	entries := deniedEntries(configured)
	gs := compileGlobs(deniedGlobs(entries))
	return func(rel string) bool {
		for _, e := range entries {
			if deniedMatch(gs, e.pattern, rel) {
				return true
			}
		}
		return false
	}
}

// deniedPath returns the first denied entry that any of the given paths
// hits: a plain entry matches any single component (".env" denies
// "src/.env" and ".env"), an entry with a slash matches the path or one of
// its leading parts ("secrets/prod" denies "secrets/prod/key.pem").
func (g *Gate) deniedPath(paths ...string) (deniedEntry, bool) {
	for _, e := range g.denied {
		for _, p := range paths {
			if deniedMatch(g.globs, e.pattern, p) {
				return e, true
			}
		}
	}
	return deniedEntry{}, false
}

func deniedMatch(gs globs, pattern, p string) bool {
	comps := strings.Split(filepath.ToSlash(p), "/")
	if !strings.Contains(pattern, "/") {
		return slices.ContainsFunc(comps, func(c string) bool {
			ok, _ := path.Match(pattern, c)
			return ok || c == pattern
		})
	}
	clean := strings.Trim(path.Clean(filepath.ToSlash(p)), "/")
	parts := strings.Split(clean, "/")
	for i := 1; i <= len(parts); i++ {
		if gs.match(strings.Trim(pattern, "/"), strings.Join(parts[:i], "/")) {
			return true
		}
	}
	return false
}

// resolve makes p absolute against the workspace and resolves it the way
// the kernel would: component by component, following every symlink
// (dangling ones too) and applying ".." to the resolved parent, so a link
// pointing out and "link/../.." are both seen. A tool may instead clean
// the path lexically before opening it, so that form is resolved too and
// whichever lands outside the workspace wins. "~" and "~user" are never
// inside a workspace and resolve to a path that cannot be.
func resolve(ws, p string) string {
	if strings.HasPrefix(p, "~") {
		return "/~home" + strings.TrimPrefix(p, "~")
	}
	if !filepath.IsAbs(p) {
		p = ws + string(filepath.Separator) + p
	}
	physical, ok := walkPath(p, maxLinks)
	if !ok {
		return "/~symlink-loop" + filepath.Clean(p)
	}
	if !inside(ws, physical) {
		return physical
	}
	lexical, ok := walkPath(filepath.Clean(p), maxLinks)
	if !ok {
		return "/~symlink-loop" + filepath.Clean(p)
	}
	return lexical
}

// walkPath resolves an absolute path; ok is false on a symlink loop.
// Components that do not exist are taken literally.
func walkPath(p string, links int) (string, bool) {
	cur := string(filepath.Separator)
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil || links == 0 {
			return "", false
		}
		if !filepath.IsAbs(target) {
			target = cur + string(filepath.Separator) + target
		}
		links--
		resolved, ok := walkPath(target, links)
		if !ok {
			return "", false
		}
		cur = resolved
	}
	return cur, true
}

// inside reports whether abs is the workspace or below it.
func inside(ws, abs string) bool {
	rel, err := filepath.Rel(ws, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
