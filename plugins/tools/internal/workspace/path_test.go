package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func TestResolve(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"a/b.txt": "x", "secret/": ""})
	outside := workspacetest.Tree(t, map[string]string{"passwd": "root"})
	workspacetest.Symlink(t, outside, filepath.Join(ws, "escape"))
	workspacetest.Symlink(t, filepath.Join(outside, "passwd"), filepath.Join(ws, "a", "pw"))
	workspacetest.Symlink(t, filepath.Join(outside, "missing"), filepath.Join(ws, "dangling"))
	workspacetest.Symlink(t, "b.txt", filepath.Join(ws, "a", "inner"))
	workspacetest.Symlink(t, "missing.txt", filepath.Join(ws, "a", "inner-dangling"))
	workspacetest.Symlink(t, "../../escape-missing", filepath.Join(ws, "a", "out-dangling"))
	root, _ := filepath.EvalSymlinks(ws)
	cases := []struct {
		path, rel, err string
	}{
		{path: "a/b.txt", rel: "a/b.txt"},
		{path: "./a/../a/b.txt", rel: "a/b.txt"},
		{path: ".", rel: "."},
		{path: filepath.Join(ws, "a", "b.txt"), rel: "a/b.txt"},
		{path: "a/new/deeper.txt", rel: "a/new/deeper.txt"},
		{path: "a/inner", rel: "a/b.txt"},
		{path: "", err: "path is empty"},
		{path: "..", err: "outside the workspace"},
		{path: "a/../../x", err: "outside the workspace"},
		{path: "/etc/passwd", err: "outside the workspace"},
		{path: "escape/passwd", err: "outside the workspace (it resolves to"},
		{path: "escape/new.txt", err: "outside the workspace"},
		{path: "a/pw", err: "outside the workspace"},
		{path: "dangling", err: "dangling is outside the workspace (it resolves to " + filepath.Join(outside, "missing") + ")"},
		{path: "dangling/x", err: "outside the workspace (it resolves to " + filepath.Join(outside, "missing", "x") + ")"},
		{path: "a/out-dangling", err: "a/out-dangling is outside the workspace (it resolves to " + filepath.Join(filepath.Dir(root), "escape-missing") + ")"},
		{path: "a/inner-dangling", err: "inner-dangling is a symlink to a missing target"},
		{path: "a/inner-dangling/x", err: "inner-dangling is a symlink to a missing target"},
		{path: "a\x00b", err: "NUL"},
	}
	for _, tc := range cases {
		got, err := Resolve(ws, tc.path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q) = %+v, %v; want error %q", tc.path, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.Rel != tc.rel || got.Root != root {
			t.Errorf("Resolve(%q) = %+v, %v; want rel %q", tc.path, got, err, tc.rel)
		}
	}
	for _, bad := range []string{"", "relative/ws"} {
		if _, err := Resolve(bad, "a"); err == nil || !strings.Contains(err.Error(), "the kernel gave no absolute workspace") {
			t.Errorf("workspace %q: err = %v", bad, err)
		}
	}
}

func TestDirAndRegularFile(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"a/b.txt": "x", ".git/config": ""})
	dirs := []struct{ path, err string }{
		{"a", ""},
		{".", ""},
		{"a/b.txt", "a/b.txt is a file, not a directory"},
		{"nope", "nope does not exist"},
		{".git", ".git is inside .git, which Sparrow's file tools do not show"},
	}
	for _, tc := range dirs {
		_, err := Dir(ws, tc.path)
		if (tc.err == "") != (err == nil) || (err != nil && err.Error() != tc.err) {
			t.Errorf("Dir(%q) = %v, want %q", tc.path, err, tc.err)
		}
	}
	files := []struct{ path, err string }{
		{"a/b.txt", ""},
		{"a", "a is a directory, not a file"},
		{"a/c.txt", "a/c.txt does not exist"},
	}
	for _, tc := range files {
		target, err := Resolve(ws, tc.path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = RegularFile(target, tc.path)
		if (tc.err == "") != (err == nil) || (err != nil && err.Error() != tc.err) {
			t.Errorf("RegularFile(%q) = %v, want %q", tc.path, err, tc.err)
		}
		if tc.path == "a/c.txt" && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a missing file's error %v does not match os.ErrNotExist", err)
		}
	}
}

func TestIsBinaryAndValidText(t *testing.T) {
	if !IsBinary([]byte("a\x00b")) || IsBinary([]byte("plain\n")) {
		t.Error("IsBinary misjudges a NUL byte")
	}
	if IsBinary([]byte(strings.Repeat("x", SniffBytes) + "\x00")) {
		t.Error("IsBinary looked past SniffBytes")
	}
	if got := ValidText("ok \xff end"); got != "ok \uFFFD end" {
		t.Errorf("ValidText = %q", got)
	}
}
