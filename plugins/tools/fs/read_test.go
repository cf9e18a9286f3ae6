package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func numbered(from, to int, text func(int) string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, text(i))
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	lineText := func(i int) string { return fmt.Sprintf("line %d", i) }
	ws := workspacetest.Tree(t, map[string]string{
		"a.go":       "package a\n\nfunc A() {}\n",
		"no-eol.txt": "one\ntwo",
		"crlf.txt":   "one\r\ntwo\r\n",
		"long.txt":   long.String(),
		"empty.txt":  "",
		"dir/":       "",
		"latin1.txt": "caf\xe9\n",
	})
	cases := []struct {
		name, args, want string
	}{
		{"whole file", workspacetest.Args("path", "a.go"), "     1\tpackage a\n     2\t\n     3\tfunc A() {}\n"},
		{"absolute inside", workspacetest.Args("path", filepath.Join(ws, "a.go")), "     1\tpackage a\n     2\t\n     3\tfunc A() {}\n"},
		{"no final newline", workspacetest.Args("path", "no-eol.txt"), "     1\tone\n     2\ttwo\n"},
		{"crlf kept", workspacetest.Args("path", "crlf.txt"), "     1\tone\r\n     2\ttwo\r\n"},
		{"offset", workspacetest.Args("path", "a.go", "offset", 3), "     3\tfunc A() {}\n"},
		{"offset and limit", workspacetest.Args("path", "a.go", "offset", 2, "limit", 1),
			"     2\t\n[truncated: 1 more lines; use offset=3 to read on]\n"},
		{"default cap", workspacetest.Args("path", "long.txt"),
			numbered(1, 2000, lineText) + "[truncated: 500 more lines; use offset=2001 to read on]\n"},
		{"limit above the cap", workspacetest.Args("path", "long.txt", "offset", 2, "limit", 5000),
			numbered(2, 2001, lineText) + "[truncated: 499 more lines; use offset=2002 to read on]\n"},
		{"last page", workspacetest.Args("path", "long.txt", "offset", 2401), numbered(2401, 2500, lineText)},
		{"empty", workspacetest.Args("path", "empty.txt"), "empty.txt is empty (0 bytes)."},
		{"invalid utf-8", workspacetest.Args("path", "latin1.txt"), "     1\tcaf\uFFFD\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustOK(t, invoke(t, readFile{}, ws, tc.args)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", clipForLog(got), clipForLog(tc.want))
			}
		})
	}
	mustFail(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "a.go", "offset", 4)), "offset 4 is past the end: a.go has 3 lines")
	mustFail(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "nope.txt")), "nope.txt does not exist")
	mustFail(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "dir")), "dir is a directory, not a file; use list_dir")
}

func TestReadFileBinary(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"img.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"})
	// A NUL after the first 8 KiB is not sniffed: the file reads as text.
	late := strings.Repeat("a", 9000) + "\x00\n"
	if err := os.WriteFile(filepath.Join(ws, "late.txt"), []byte(late), 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "img.png")), "img.png is a binary file (16 bytes); read_file shows text only")
	mustOK(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "late.txt")))
}

func TestReadFileByteCap(t *testing.T) {
	line := strings.Repeat("x", 999) + "\n" // 1000 bytes a line: the byte cap comes before the line cap
	ws := workspacetest.Tree(t, map[string]string{"wide.txt": strings.Repeat(line, 400), "huge-line.txt": strings.Repeat("y", 300<<10)})
	got := mustOK(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "wide.txt")))
	shown := strings.Count(got, "\n") - 1
	if shown < 250 || shown > 263 || !strings.HasSuffix(got, fmt.Sprintf("[truncated: %d more lines; use offset=%d to read on]\n", 400-shown, shown+1)) {
		t.Errorf("shown %d lines, ending %q", shown, got[len(got)-80:])
	}
	got = mustOK(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "huge-line.txt")))
	if !strings.HasPrefix(got, "     1\tyyy") || !strings.Contains(got, "… [line cut at the 256 KiB output cap]") || len(got) > 257<<10 {
		t.Errorf("a single huge line: %d bytes, ending %q", len(got), got[len(got)-60:])
	}
}

func clipForLog(s string) string {
	if len(s) > 400 {
		return s[:200] + "\n…\n" + s[len(s)-200:]
	}
	return s
}
