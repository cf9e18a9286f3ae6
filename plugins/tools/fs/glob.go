package fs

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed glob.md
var globDoc string

// glob limits: files shown, and files collected before sorting.
const (
	maxGlobResults = 1000
	maxGlobCollect = 100_000
)

type globTool struct{}

func (globTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "glob", Description: globDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: schema(`"pattern":{"type":"string","description":"Glob relative to path, e.g. **/*.go; ** spans directories."},`+
			`"path":{"type":"string","description":"Workspace-relative directory to search (default: the workspace root)."}`, "pattern"),
	}
}

func (globTool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return argError(err), nil
	}
	a.Pattern = strings.TrimPrefix(a.Pattern, "./")
	if err := checkGlob("pattern", a.Pattern, true); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := dirTarget(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	hits, more, err := globFiles(ctx, t, a.Pattern)
	if err != nil {
		return listError(ctx, a.Path, err)
	}
	if len(hits) == 0 {
		return tool.Result{Content: fmt.Sprintf("No files match %s in %s.", a.Pattern, a.Path)}, nil
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
	return tool.Result{Content: validText(b.String())}, nil
}

// checkGlob validates a doublestar pattern argument.
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
func globFiles(ctx context.Context, t target, pattern string) ([]globHit, string, error) {
	base, _ := doublestar.SplitPattern(pattern)
	start := t
	if base != "." {
		sub, err := resolve(t.root, filepath.Join(t.abs, filepath.FromSlash(base)))
		if err != nil || !isDir(sub.abs) {
			return nil, "", nil // the literal prefix is not a directory: nothing can match
		}
		start = sub
	}
	var hits []globHit
	more := ""
	err := newWalker(t.root).walk(ctx, start, 0, func(e entry) error {
		if e.d.IsDir() {
			return nil
		}
		// Matched as the model wrote it: the literal prefix, then the
		// path below where it resolved (a symlinked prefix stays as named).
		name := relBelow(start.rel, e.rel)
		if base != "." {
			name = base + "/" + name
		}
		if ok, _ := doublestar.Match(pattern, name); !ok {
			return nil
		}
		if len(hits) == maxGlobCollect {
			more = fmt.Sprintf(" (collection stopped at %d, so the order is approximate)", maxGlobCollect)
			return errStop
		}
		var mt int64
		if fi, err := e.d.Info(); err == nil {
			mt = fi.ModTime().UnixNano()
		}
		hits = append(hits, globHit{e.rel, mt})
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

// relBelow is rel (workspace-relative) relative to the directory dir
// (workspace-relative, "." for the root).
func relBelow(dir, rel string) string {
	if dir == "." {
		return rel
	}
	return strings.TrimPrefix(rel, path.Clean(dir)+"/")
}
