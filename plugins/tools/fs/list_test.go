package fs

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func TestListDir(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{
		".gitignore":          "node_modules/\n*.log\n",
		".git/config":         "",
		"README.md":           strings.Repeat("r", 2048),
		"debug.log":           "x",
		"node_modules/x/a.js": "x",
		"src/main.go":         "package main\n",
		"src/lib/lib.go":      "package lib\n",
		"src/lib/deep/d.go":   "package deep\n",
		"empty/":              "",
	})
	workspacetest.Symlink(t, "README.md", filepath.Join(ws, "link.md"))
	cases := []struct {
		name, args, want string
	}{
		{"root, depth 1", `{}`, ".gitignore (20 B)\nREADME.md (2.0 KiB)\nempty/\nlink.md -> README.md\nsrc/\n"},
		{"depth 2 below src", workspacetest.Args("path", "src", "depth", 2), "src/lib/\nsrc/lib/deep/\nsrc/lib/lib.go (12 B)\nsrc/main.go (13 B)\n"},
		{"depth 5", workspacetest.Args("path", "src", "depth", 5), "src/lib/\nsrc/lib/deep/\nsrc/lib/deep/d.go (13 B)\nsrc/lib/lib.go (12 B)\nsrc/main.go (13 B)\n"},
		{"an ignored directory by name", workspacetest.Args("path", "node_modules", "depth", 2), "node_modules/x/\nnode_modules/x/a.js (1 B)\n"},
		{"empty", workspacetest.Args("path", "empty"), "empty is empty (or holds only ignored files)."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, invoke(t, listDir{}, ws, tc.args)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	mustFail(t, invoke(t, listDir{}, ws, workspacetest.Args("path", "src/main.go")), "src/main.go is a file, not a directory")
	mustFail(t, invoke(t, listDir{}, ws, workspacetest.Args("path", "nope")), "nope does not exist")
	mustFail(t, invoke(t, listDir{}, ws, workspacetest.Args("path", ".git")), "inside .git")
}

func TestListDirCap(t *testing.T) {
	files := map[string]string{}
	for i := range 1200 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	ws := workspacetest.Tree(t, files)
	got := mustOK(t, invoke(t, listDir{}, ws, `{}`))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 1001 || lines[999] != "f0999.txt (0 B)" ||
		lines[1000] != "[truncated: stopped at 1000 entries; list a subdirectory or use a smaller depth]" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
