package fs

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/argcheck"
	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed list_dir.md
var listDirDoc string

// list_dir limits.
const (
	maxListDepth   = 5
	maxListEntries = 1000
)

type listDir struct{}

func (listDir) Spec() tool.Spec {
	return tool.Spec{
		Name: "list_dir", Description: listDirDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: schema(`"path":{"type":"string","description":"Workspace-relative directory (default: the workspace root)."},` +
			`"depth":{"type":"integer","minimum":1,"maximum":5,"description":"Levels to descend (default 1)."}`),
	}
}

func (listDir) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path  string `json:"path"`
		Depth *int   `json:"depth"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return argError(err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	depth, err := argcheck.Int("depth", a.Depth, 1, 1, maxListDepth)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	t, err := workspace.Dir(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	var b strings.Builder
	n, truncated := 0, false
	err = workspace.Walk(ctx, t, depth, func(e workspace.Entry) error {
		if n == maxListEntries {
			truncated = true
			return workspace.ErrStop
		}
		n++
		b.WriteString(describe(e))
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		return listError(ctx, a.Path, err)
	}
	if n == 0 {
		return tool.Result{Content: fmt.Sprintf("%s is empty (or holds only ignored files).", a.Path)}, nil
	}
	if truncated {
		fmt.Fprintf(&b, "[truncated: stopped at %d entries; list a subdirectory or use a smaller depth]\n", maxListEntries)
	}
	return tool.Result{Content: workspace.ValidText(b.String())}, nil
}

// describe is one list_dir line: "dir/", "file (N bytes)" or
// "link -> target".
func describe(e workspace.Entry) string {
	switch {
	case e.IsDir():
		return e.Rel + "/"
	case e.Type()&fs.ModeSymlink != 0:
		if dest, err := os.Readlink(e.Abs); err == nil {
			return e.Rel + " -> " + dest
		}
		return e.Rel + " -> ?"
	case !e.Type().IsRegular():
		return e.Rel + " (" + e.Type().String() + ")"
	}
	if fi, err := e.Info(); err == nil {
		return fmt.Sprintf("%s (%s)", e.Rel, size(fi.Size()))
	}
	return e.Rel
}

// size is a byte count for people and models: "812 B", "4.2 KiB".
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// listError turns a walk failure into a result: cancellation is the
// caller's, anything else the model's to hear about.
func listError(ctx context.Context, p string, err error) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, ctx.Err()
	}
	return tool.Errorf("cannot walk %s: %v", p, err), nil
}
