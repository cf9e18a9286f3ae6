package fs

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestListDir(t *testing.T) {
	ws := tree(t, map[string]string{
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
	symlink(t, "README.md", filepath.Join(ws, "link.md"))
	cases := []struct {
		name, args, want string
	}{
		{"root, depth 1", `{}`, ".gitignore (20 B)\nREADME.md (2.0 KiB)\nempty/\nlink.md -> README.md\nsrc/\n"},
		{"depth 2 below src", args("path", "src", "depth", 2), "src/lib/\nsrc/lib/deep/\nsrc/lib/lib.go (12 B)\nsrc/main.go (13 B)\n"},
		{"depth 5", args("path", "src", "depth", 5), "src/lib/\nsrc/lib/deep/\nsrc/lib/deep/d.go (13 B)\nsrc/lib/lib.go (12 B)\nsrc/main.go (13 B)\n"},
		{"an ignored directory by name", args("path", "node_modules", "depth", 2), "node_modules/x/\nnode_modules/x/a.js (1 B)\n"},
		{"empty", args("path", "empty"), "empty is empty (or holds only ignored files)."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, invoke(t, listDir{}, ws, tc.args)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	mustFail(t, invoke(t, listDir{}, ws, args("path", "src/main.go")), "src/main.go is a file, not a directory")
	mustFail(t, invoke(t, listDir{}, ws, args("path", "nope")), "nope does not exist")
	mustFail(t, invoke(t, listDir{}, ws, args("path", ".git")), "inside .git")
}

func TestListDirCap(t *testing.T) {
	files := map[string]string{}
	for i := range 1200 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	ws := tree(t, files)
	got := mustOK(t, invoke(t, listDir{}, ws, `{}`))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 1001 || lines[999] != "f0999.txt (0 B)" ||
		lines[1000] != "[truncated: stopped at 1000 entries; list a subdirectory or use a smaller depth]" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestGlob(t *testing.T) {
	ws := tree(t, map[string]string{
		".gitignore":           "vendor/\n*.gen.go\n",
		"main.go":              "",
		"main_test.go":         "",
		"x.gen.go":             "",
		"vendor/v/v.go":        "",
		"pkg/a/a.go":           "",
		"pkg/a/a_test.go":      "",
		"pkg/b/b.go":           "",
		"web/app.ts":           "",
		"web/app.tsx":          "",
		".git/hooks/pre.go":    "",
		"pkg/a/testdata/t.txt": "",
	})
	symlink(t, "pkg", filepath.Join(ws, "alias"))
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"main.go", "main_test.go", "pkg/a/a.go", "pkg/a/a_test.go", "pkg/b/b.go", "web/app.ts", "web/app.tsx"} {
		touch(t, filepath.Join(ws, filepath.FromSlash(p)), base, time.Duration(i)*time.Hour)
	}
	cases := []struct {
		name, args, want string
	}{
		{"top level only", args("pattern", "*.go"), "main_test.go\nmain.go\n"},
		{"recursive, newest first", args("pattern", "**/*.go"), "pkg/b/b.go\npkg/a/a_test.go\npkg/a/a.go\nmain_test.go\nmain.go\n"},
		{"below a path", args("pattern", "**/*_test.go", "path", "pkg"), "pkg/a/a_test.go\n"},
		{"literal prefix", args("pattern", "pkg/*/a.go"), "pkg/a/a.go\n"},
		{"through a symlinked prefix", args("pattern", "alias/*/a.go"), "pkg/a/a.go\n"},
		{"leading ./", args("pattern", "./pkg/*/a.go"), "pkg/a/a.go\n"},
		{"alternatives", args("pattern", "web/*.{ts,tsx}"), "web/app.tsx\nweb/app.ts\n"},
		{"ignored dir named", args("pattern", "**/*.go", "path", "vendor"), "vendor/v/v.go\n"},
		{"nothing", args("pattern", "**/*.rs"), "No files match **/*.rs in .."},
		{"missing prefix", args("pattern", "nope/**/*.go"), "No files match nope/**/*.go in .."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, invoke(t, globTool{}, ws, tc.args)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	mustFail(t, invoke(t, globTool{}, ws, args("pattern", "*", "path", "main.go")), "is a file, not a directory")
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := range 1100 {
		files[fmt.Sprintf("d%d/f%04d.txt", i%7, i)] = ""
	}
	ws := tree(t, files)
	touch(t, filepath.Join(ws, "d3", "f0003.txt"), time.Now(), time.Hour)
	got := mustOK(t, invoke(t, globTool{}, ws, args("pattern", "**/*.txt")))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 1001 || lines[0] != "d3/f0003.txt" || lines[1000] != "[truncated: 100 more files; narrow the pattern or the path]" {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
