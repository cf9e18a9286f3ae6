package search

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
)

// glob limits: files shown, and files collected before sorting.
const (
	maxGlobResults = 1000
	maxGlobCollect = 100_000
)

// globArgs are glob's arguments; the JSON names are its schema's
// properties (plugin.hcl).
type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// glob lists the files below a.Path in the workspace ws that match
// a.Pattern, most recently modified first.
func glob(ws string, a globArgs) (string, error) {
	a.Pattern = strings.TrimPrefix(a.Pattern, "./")
	if err := checkGlob("pattern", a.Pattern, true); err != nil {
		return "", err
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := workspace.Dir(ws, a.Path)
	if err != nil {
		return "", err
	}
	hits, more, err := globFiles(t, a.Pattern)
	if err != nil {
		return "", walkError(a.Path, err)
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No files match %s in %s.", a.Pattern, a.Path), nil
	}
	var b strings.Builder
	for i, h := range hits {
		if i == maxGlobResults {
			fmt.Fprintf(&b, "[truncated: %d more files%s; narrow the pattern or the path]\n", len(hits)-i, more)
			break
		}
		b.WriteString(h.rel)
		b.WriteByte('\n')
	}
	return workspace.ValidText(b.String()), nil
}

// checkGlob validates the doublestar pattern argument name.
func checkGlob(name, p string, required bool) error {
	switch {
	case p == "" && required:
		return fmt.Errorf("%s is required", name)
	case p == "":
		return nil
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%s %q must be relative (use path to choose the directory)", name, p)
	case !doublestar.ValidatePattern(p):
		return fmt.Errorf("%s %q is not a valid glob", name, p)
	}
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return fmt.Errorf("%s %q must not contain ..", name, p)
		}
	}
	return nil
}

type globHit struct {
	rel   string
	mtime int64
}

// globFiles walks from the pattern's literal prefix below t and returns
// the matching files, newest first (ties by path). more is a note when the
// collection itself was capped.
func globFiles(t workspace.Target, pattern string) ([]globHit, string, error) {
	base, _ := doublestar.SplitPattern(pattern)
	start := t
	if base != "." {
		sub, err := workspace.Resolve(t.Root, filepath.Join(t.Abs, filepath.FromSlash(base)))
		if err != nil || !workspace.IsDir(sub.Abs) {
			return nil, "", nil // the literal prefix is not a directory: nothing can match
		}
		start = sub
	}
	var hits []globHit
	more := ""
	err := walk(start, func(e workspace.Entry) error {
		if e.IsDir() {
			return nil
		}
		// Matched as the model wrote it: the literal prefix, then the
		// path below where it resolved (a symlinked prefix stays as named).
		name := workspace.RelBelow(start.Rel, e.Rel)
		if base != "." {
			name = base + "/" + name
		}
		if ok, _ := doublestar.Match(pattern, name); !ok {
			return nil
		}
		if len(hits) == maxGlobCollect {
			more = fmt.Sprintf(" (collection stopped at %d, so the order is approximate)", maxGlobCollect)
			return workspace.ErrStop
		}
		var mt int64
		if fi, err := e.Info(); err == nil {
			mt = fi.ModTime().UnixNano()
		}
		hits = append(hits, globHit{e.Rel, mt})
		return nil
	})
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].mtime != hits[j].mtime {
			return hits[i].mtime > hits[j].mtime
		}
		return hits[i].rel < hits[j].rel
	})
	return hits, more, err
}
