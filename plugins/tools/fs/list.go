package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed list_dir.md
var listDirDoc string

//go:embed glob.md
var globDoc string

const maxEntries = 1000

var errEnough = errors.New("enough")

type listDir struct{}

func (listDir) Spec() tool.Spec {
	return tool.Spec{Name: "list_dir", Description: listDirDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"depth":{"type":"integer","minimum":1,"maximum":5}}}`)}
}

func (listDir) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path  string `json:"path"`
		Depth int    `json:"depth"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	if a.Depth == 0 {
		a.Depth = 1
	}
	if a.Depth < 1 || a.Depth > 5 {
		return tool.Errorf("depth must be 1 to 5, got %d", a.Depth), nil
	}
	abs, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return tool.Errorf("%s is not a directory", a.Path), nil
	}
	w := newWalker(rootOf(c.Workspace))
	var b strings.Builder
	n := 0
	err = w.walk(abs, a.Depth, func(rel string, d fs.DirEntry) error {
		if n == maxEntries {
			return errEnough
		}
		n++
		if d.IsDir() {
			fmt.Fprintf(&b, "%s/\n", rel)
		} else {
			fmt.Fprintf(&b, "%s  (%d bytes)\n", rel, fileSize(d))
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		fmt.Fprintf(&b, "[truncated at %d entries; list a subdirectory]\n", maxEntries)
	}
	if n == 0 {
		return tool.Result{Content: a.Path + " is empty."}, nil
	}
	return tool.Result{Content: b.String()}, nil
}

type globTool struct{}

func (globTool) Spec() tool.Spec {
	return tool.Spec{Name: "glob", Description: globDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: []byte(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`)}
}

func (globTool) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if !doublestar.ValidatePattern(a.Pattern) {
		return tool.Errorf("pattern %q is not a valid glob", a.Pattern), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	abs, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	w := newWalker(rootOf(c.Workspace))
	type hit struct {
		rel   string
		mtime int64
	}
	var hits []hit
	truncated := false
	err = w.walk(abs, 0, func(rel string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		sub := relFrom(abs, w.root, rel)
		if ok, _ := doublestar.Match(a.Pattern, sub); !ok {
			return nil
		}
		if len(hits) == maxEntries {
			truncated = true
			return errEnough
		}
		var mt int64
		if fi, err := d.Info(); err == nil {
			mt = fi.ModTime().UnixNano()
		}
		hits = append(hits, hit{rel, mt})
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return tool.Errorf("glob: %v", err), nil
	}
	if len(hits) == 0 {
		return tool.Result{Content: fmt.Sprintf("No files match %s.", a.Pattern)}, nil
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].mtime > hits[j].mtime })
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(h.rel + "\n")
	}
	if truncated {
		fmt.Fprintf(&b, "[truncated at %d files; narrow the pattern]\n", maxEntries)
	}
	return tool.Result{Content: b.String()}, nil
}

// relFrom is rel (workspace-relative) made relative to the search dir.
func relFrom(searchAbs, root, rel string) string {
	prefix := strings.TrimPrefix(strings.TrimPrefix(searchAbs, root), "/")
	if prefix == "" {
		return rel
	}
	return strings.TrimPrefix(rel, prefix+"/")
}
