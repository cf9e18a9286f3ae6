package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func grepTree(t testing.TB) string {
	return workspacetest.Tree(t, map[string]string{
		".gitignore":      "dist/\n*.min.js\n",
		"a.go":            "package a\n\n// TODO: one\nfunc A() {}\n",
		"b/b.go":          "package b\n\nfunc B() {\n\t// todo: two\n}\n",
		"b/c.txt":         "TODO three\n",
		"b-sibling.go":    "// TODO: sorts after b/ by path\n",
		"dist/out.go":     "// TODO: ignored\n",
		"app.min.js":      "// TODO: ignored too\n",
		".git/TODO":       "TODO in .git\n",
		"img.bin":         "TODO\x00binary",
		"ctx.txt":         "1\n2\n3\nMATCH a\n5\n6\n7\n8\n9\n10\nMATCH b\nMATCH c\n13\n",
		"crlf.txt":        "x TODO\r\ny\r\n",
		"sub/dir/deep.go": "// TODO: deep\n",
	})
}

func TestGrep(t *testing.T) {
	ws := grepTree(t)
	cases := []struct {
		name, args, want string
	}{
		{"sorted by path, ignored and binary skipped", workspacetest.Args("pattern", "TODO"),
			"a.go:3:// TODO: one\nb-sibling.go:1:// TODO: sorts after b/ by path\nb/c.txt:1:TODO three\ncrlf.txt:1:x TODO\nsub/dir/deep.go:1:// TODO: deep\n"},
		{"ignore_case", workspacetest.Args("pattern", "todo:", "ignore_case", true, "path", "b"),
			"b/b.go:4:\t// todo: two\n"},
		{"ignore_case literal", workspacetest.Args("pattern", "Todo: ONE", "ignore_case", true), "a.go:3:// TODO: one\n"},
		{"case-sensitive by default", workspacetest.Args("pattern", "todo:", "path", "b"),
			"b/b.go:4:\t// todo: two\n"},
		{"glob on names at any depth", workspacetest.Args("pattern", "TODO", "glob", "*.go"),
			"a.go:3:// TODO: one\nb-sibling.go:1:// TODO: sorts after b/ by path\nsub/dir/deep.go:1:// TODO: deep\n"},
		{"glob with a path", workspacetest.Args("pattern", "TODO", "glob", "sub/**/*.go"),
			"sub/dir/deep.go:1:// TODO: deep\n"},
		{"a file", workspacetest.Args("pattern", "T.DO", "path", "b/c.txt"), "b/c.txt:1:TODO three\n"},
		{"an ignored file by name", workspacetest.Args("pattern", "TODO", "path", "dist/out.go"), "dist/out.go:1:// TODO: ignored\n"},
		{"an ignored dir by name", workspacetest.Args("pattern", "TODO", "path", "dist"), "dist/out.go:1:// TODO: ignored\n"},
		{"anchors per line", workspacetest.Args("pattern", "^func", "path", "."), "a.go:4:func A() {}\nb/b.go:3:func B() {\n"},
		{"end anchor despite CRLF", workspacetest.Args("pattern", "TODO$", "path", "crlf.txt"), "crlf.txt:1:x TODO\n"},
		{"context", workspacetest.Args("pattern", "MATCH", "path", "ctx.txt", "context", 2),
			"ctx.txt-2-2\nctx.txt-3-3\nctx.txt:4:MATCH a\nctx.txt-5-5\nctx.txt-6-6\n--\nctx.txt-9-9\nctx.txt-10-10\nctx.txt:11:MATCH b\nctx.txt:12:MATCH c\nctx.txt-13-13\n"},
		{"context merges", workspacetest.Args("pattern", "MATCH", "path", "ctx.txt", "context", 5),
			"ctx.txt-1-1\nctx.txt-2-2\nctx.txt-3-3\nctx.txt:4:MATCH a\nctx.txt-5-5\nctx.txt-6-6\nctx.txt-7-7\nctx.txt-8-8\nctx.txt-9-9\nctx.txt-10-10\nctx.txt:11:MATCH b\nctx.txt:12:MATCH c\nctx.txt-13-13\n"},
		{"max_results", workspacetest.Args("pattern", "TODO", "max_results", 2),
			"a.go:3:// TODO: one\nb-sibling.go:1:// TODO: sorts after b/ by path\n[truncated: showing the first 2 matching lines; narrow the pattern, path or glob, or raise max_results]\n"},
		{"max_results inside one file", workspacetest.Args("pattern", "MATCH", "path", "ctx.txt", "max_results", 1),
			"ctx.txt:4:MATCH a\n[truncated: showing the first 1 matching lines; narrow the pattern, path or glob, or raise max_results]\n"},
		{"no match", workspacetest.Args("pattern", "NOPE"), `No matches for "NOPE" in . (8 files searched; 1 binary or over-2-MiB files skipped).`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, Grep, ws, tc.args); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	mustFail(t, Grep, ws, workspacetest.Args("pattern", "x", "path", "missing"), "missing does not exist")
}

func TestGrepSkipsLargeFilesAndClipsLines(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{
		"big.txt":  "needle\n" + strings.Repeat("x", maxGrepFileBytes),
		"wide.txt": "needle " + strings.Repeat("w", 2000) + "\n",
	})
	got := mustOK(t, Grep, ws, workspacetest.Args("pattern", "needle"))
	want := "wide.txt:1:needle " + strings.Repeat("w", maxGrepLineBytes-7) + "… [+1507 bytes]\n"
	if got != want {
		t.Errorf("got %q…, %d bytes", got[:min(len(got), 200)], len(got))
	}
}

func TestGrepOutputCap(t *testing.T) {
	files := map[string]string{}
	line := "hit " + strings.Repeat("z", 400) + "\n"
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat(line, 40)
	}
	ws := workspacetest.Tree(t, files)
	got := mustOK(t, Grep, ws, workspacetest.Args("pattern", "hit", "max_results", 2000))
	if len(got) > maxGrepOutputSize+2048 || !strings.Contains(got, "[truncated: output cut at 256 KiB after") {
		t.Errorf("%d bytes, ending %q", len(got), got[len(got)-120:])
	}
}

// The early stop must give the same answer as a full search: the first
// max_results matches in path order, whatever the number of workers (one
// in the WASM module) and whatever order they finish in.
func TestGrepEarlyStopIsDeterministic(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		body := "nothing here\n"
		if i%3 == 0 {
			body = fmt.Sprintf("match %d\nmatch %d again\n", i, i)
		}
		files[fmt.Sprintf("d%d/f%03d.txt", i%4, i)] = body
	}
	ws := workspacetest.Tree(t, files)
	first := mustOK(t, Grep, ws, workspacetest.Args("pattern", "match", "max_results", 37))
	lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
	if len(lines) != 38 || lines[0] != "d0/f000.txt:1:match 0" || !strings.HasPrefix(lines[37], "[truncated: showing the first 37") {
		t.Errorf("%d lines: %q … %q", len(lines), lines[0], lines[len(lines)-1])
	}

	q, err := grepArgs{Pattern: "match", MaxResults: &[]int{37}[0]}.query()
	if err != nil {
		t.Fatal(err)
	}
	start, err := workspace.Dir(ws, ".")
	if err != nil {
		t.Fatal(err)
	}
	paths, err := grepFiles(start, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 16} {
		for range 10 {
			got := search(start.Root, paths, q, workers).format("match", ".", len(paths), q.max)
			if got != first {
				t.Fatalf("%d workers: results differ from the tool's:\n%s\nvs\n%s", workers, got, first)
			}
		}
	}
}

// BenchmarkGrep searches a generated tree of about 2000 source files.
func BenchmarkGrep(b *testing.B) {
	ws := b.TempDir()
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "func handler%d(w http.ResponseWriter, r *http.Request) { return }\n", i)
	}
	for i := range 2000 {
		dir := filepath.Join(ws, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("sub%d", i%5))
		workspacetest.Mkdir(b, dir)
		content := body.String()
		if i%50 == 0 {
			content += "// FIXME: rare marker\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%04d.go", i)), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("pkg39/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, args string }{
		{"rare", workspacetest.Args("pattern", `FIXME: \w+`)},
		{"common", workspacetest.Args("pattern", `handler1\d\b`, "max_results", 200)},
		{"ignore_case", workspacetest.Args("pattern", "fixme", "ignore_case", true, "glob", "*.go")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := call(Grep, ws, bc.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
