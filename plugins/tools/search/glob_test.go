package search

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func TestGlob(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{
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
	workspacetest.Symlink(t, "pkg", filepath.Join(ws, "alias"))
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"main.go", "main_test.go", "pkg/a/a.go", "pkg/a/a_test.go", "pkg/b/b.go", "web/app.ts", "web/app.tsx"} {
		workspacetest.Touch(t, filepath.Join(ws, filepath.FromSlash(p)), base, time.Duration(i)*time.Hour)
	}
	args := workspacetest.Args
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
			if got := mustOK(t, Glob, ws, tc.args); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	mustFail(t, Glob, ws, args("pattern", "*", "path", "main.go"), "main.go is a file, not a directory")
	mustFail(t, Glob, ws, args("pattern", "*", "path", "nope"), "nope does not exist")
	mustFail(t, Glob, ws, args("pattern", "*", "path", ".git"), "inside .git")
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := range 1100 {
		files[fmt.Sprintf("d%d/f%04d.txt", i%7, i)] = ""
	}
	ws := workspacetest.Tree(t, files)
	workspacetest.Touch(t, filepath.Join(ws, "d3", "f0003.txt"), time.Now(), time.Hour)
	got := mustOK(t, Glob, ws, workspacetest.Args("pattern", "**/*.txt"))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 1001 || lines[0] != "d3/f0003.txt" || lines[1000] != "[truncated: 100 more files; narrow the pattern or the path]" {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
