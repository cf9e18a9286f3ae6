package fs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed write_file.md
var writeFileDoc string

//go:embed edit_file.md
var editFileDoc string

type writeFile struct{}

func (writeFile) Spec() tool.Spec {
	return tool.Spec{Name: "write_file", Description: writeFileDoc, Risk: tool.RiskMutating, PathArguments: []string{"path"},
		InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)}
}

func (writeFile) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	abs, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	old, err := os.ReadFile(abs)
	created := errors.Is(err, fs.ErrNotExist)
	if err != nil && !created {
		return tool.Errorf("cannot read %s: %v", a.Path, err), nil
	}
	return commit(c, abs, string(old), a.Content, created)
}

// commit writes the new content and reports the change with its diff.
func commit(c *tool.Call, abs, old, new string, created bool) (tool.Result, error) {
	if err := atomicWrite(abs, []byte(new)); err != nil {
		return tool.Errorf("cannot write %s: %v", relTo(c.Workspace, abs), err), nil
	}
	rel := relTo(c.Workspace, abs)
	diff, added, removed := unifiedDiff(rel, old, new)
	meta, _ := json.Marshal(map[string]any{"path": rel, "diff": diff, "added": added, "removed": removed, "created": created})
	verb := "Updated"
	if created {
		verb = "Created"
	}
	return tool.Result{Content: fmt.Sprintf("%s %s (+%d -%d).", verb, rel, added, removed), Metadata: meta}, nil
}

type editFile struct{}

func (editFile) Spec() tool.Spec {
	return tool.Spec{Name: "edit_file", Description: editFileDoc, Risk: tool.RiskMutating, PathArguments: []string{"path"},
		InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"},"patch":{"type":"string"}},"required":["path"]}`)}
}

func (editFile) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path       string `json:"path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
		Patch      string `json:"patch"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if a.Patch != "" {
		if a.OldString != "" || a.NewString != "" {
			return tool.Errorf("give either patch or old_string/new_string, not both"), nil
		}
		return patchFile(c, a.Path, a.Patch)
	}
	if a.OldString == "" {
		return tool.Errorf("old_string is empty; to create a file use write_file"), nil
	}
	if a.OldString == a.NewString {
		return tool.Errorf("old_string and new_string are the same; nothing to change"), nil
	}
	abs, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", a.Path, err), nil
	}
	old := string(data)
	switch n := strings.Count(old, a.OldString); {
	case n == 0:
		return tool.Errorf("old_string was not found in %s. %s", a.Path, closest(old, a.OldString)), nil
	case n > 1 && !a.ReplaceAll:
		return tool.Errorf("old_string occurs %d times in %s; add surrounding lines to make it unique, or set replace_all", n, a.Path), nil
	}
	updated := strings.Replace(old, a.OldString, a.NewString, 1)
	if a.ReplaceAll {
		updated = strings.ReplaceAll(old, a.OldString, a.NewString)
	}
	return commit(c, abs, old, updated, false)
}

// closest points at the line most like old_string's first line.
func closest(content, want string) string {
	first := strings.TrimSpace(strings.SplitN(want, "\n", 2)[0])
	if first == "" {
		return "Read the file again and copy the text exactly."
	}
	best, bestScore := -1, 0
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		score := commonPrefix(strings.TrimSpace(l), first)
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || bestScore < 3 {
		return "Read the file again and copy the text exactly, whitespace included."
	}
	return fmt.Sprintf("The closest line is %d: %q. Copy the text exactly, whitespace included.", best+1, strings.TrimSpace(lines[best]))
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// patchFile applies a unified diff to one file.
func patchFile(c *tool.Call, path, patch string) (tool.Result, error) {
	abs, err := resolve(c.Workspace, path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", path, err), nil
	}
	updated, err := applyPatch(string(data), patch)
	if err != nil {
		return tool.Errorf("%s: %v", path, err), nil
	}
	return commit(c, abs, string(data), updated, false)
}
