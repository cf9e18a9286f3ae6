package fs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed write_file.md
var writeFileDoc string

type writeFile struct{}

func (writeFile) Spec() tool.Spec {
	return tool.Spec{
		Name: "write_file", Description: writeFileDoc, Risk: tool.RiskMutating, PathArguments: []string{"path"},
		InputSchema: schema(`"path":{"type":"string","description":"Workspace-relative file path."},`+
			`"content":{"type":"string","description":"The whole new content of the file."}`, "path", "content"),
	}
}

func (writeFile) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return argError(err), nil
	}
	if a.Path == "" {
		return tool.Errorf("path is required"), nil
	}
	if a.Content == nil {
		return tool.Errorf(`content is required (use "" for an empty file)`), nil
	}
	t, err := workspace.Resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if err := writable(t, a.Path); err != nil {
		return tool.Errorf("%v", err), nil
	}
	_, err = workspace.RegularFile(t, a.Path)
	created := errors.Is(err, os.ErrNotExist)
	if err != nil && !created {
		return tool.Errorf("%v", err), nil
	}
	var old []byte
	if !created {
		if old, err = os.ReadFile(t.Abs); err != nil {
			return tool.Errorf("cannot read %s: %v", a.Path, err), nil
		}
	}
	return commit(t, string(old), *a.Content, created, "")
}

// change is the Metadata of write_file and edit_file, for surfaces.
type change struct {
	Path    string `json:"path"`
	Diff    string `json:"diff"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Created bool   `json:"created"`
}

// commit writes updated over old at t and reports the change with its
// unified diff. note, when set, starts the model-facing summary.
func commit(t workspace.Target, old, updated string, created bool, note string) (tool.Result, error) {
	diff, added, removed := unifiedDiff(t.Rel, old, updated, created)
	meta, err := json.Marshal(change{Path: t.Rel, Diff: diff, Added: added, Removed: removed, Created: created})
	if err != nil {
		return tool.Result{}, err
	}
	if !created && old == updated {
		return tool.Result{Content: fmt.Sprintf("%s is unchanged: the new content is identical.", t.Rel), Metadata: meta}, nil
	}
	if err := atomicWrite(t.Abs, []byte(updated)); err != nil {
		return tool.Errorf("cannot write %s: %v", t.Rel, err), nil
	}
	var msg string
	switch {
	case created:
		msg = fmt.Sprintf("Created %s (%d lines, %d bytes).", t.Rel, lineCount(updated), len(updated))
	default:
		msg = fmt.Sprintf("Updated %s (+%d -%d lines).", t.Rel, added, removed)
	}
	if note != "" {
		msg = note + " " + msg
	}
	return tool.Result{Content: msg, Metadata: meta}, nil
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// atomicWrite replaces path with data: a temp file in the same directory,
// written, synced, given the old file's mode (0644 for a new file) and
// renamed over path. Parent directories are created.
func atomicWrite(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".sparrow-write-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
