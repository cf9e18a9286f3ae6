package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

const goSrc = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("hello")
}
`

func TestEditFileReplacesOnce(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"main.go": goSrc})
	if err := os.Chmod(filepath.Join(ws, "main.go"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", "import \"fmt\"", "new_string", "import (\n\t\"fmt\"\n\t\"os\"\n)"))
	if got := mustOK(t, res); got != "Updated main.go (+4 -1 lines)." {
		t.Errorf("content %q", got)
	}
	want := change{Path: "main.go", Added: 4, Removed: 1, Diff: "--- a/main.go\n+++ b/main.go\n@@ -1,6 +1,9 @@\n package main\n \n" +
		"-import \"fmt\"\n+import (\n+\t\"fmt\"\n+\t\"os\"\n+)\n \n func main() {\n \tfmt.Println(\"hello\")\n"}
	if d := cmp.Diff(want, changeOf(t, res)); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "main.go")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v not kept", fi.Mode())
	}
}

func TestEditFileMatches(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"main.go": goSrc})
	abs := filepath.Join(ws, "main.go")

	// Two matches: refused, with the count and lines.
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", `fmt.Println("hello")`, "new_string", "x")),
		"old_string occurs 2 times (at lines 6, 7), nothing was changed; include more surrounding lines to make it unique, or set replace_all to true")
	// Zero matches: the closest line as a hint.
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", `fmt.Printn("hello")`, "new_string", "x")),
		"old_string was not found, nothing was changed. The closest line is 6: \"\\tfmt.Println(\\\"hello\\\")\".")
	// Whitespace differences get a precise hint.
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", "func main() {\n    fmt.Println(\"hello\")", "new_string", "x")),
		"It matches lines 5-6 if whitespace is ignored")
	// Nothing alike at all.
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", "zzzz qqqq", "new_string", "x")),
		"Read the file again and copy the text exactly")
	if got := readString(t, abs); got != goSrc {
		t.Fatalf("a failed edit changed the file:\n%s", got)
	}

	// replace_all changes both.
	res := invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", `"hello"`, "new_string", `"bye"`, "replace_all", true))
	if got := mustOK(t, res); got != "Replaced 2 occurrence(s). Updated main.go (+2 -2 lines)." {
		t.Errorf("content %q", got)
	}
	if got := readString(t, abs); strings.Count(got, `"bye"`) != 2 || strings.Contains(got, "hello") {
		t.Errorf("file:\n%s", got)
	}
	// Deleting text.
	mustOK(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "main.go", "old_string", "\n\tfmt.Println(\"bye\")\n}", "new_string", "\n}", "replace_all", false)))
	if got := readString(t, abs); strings.Count(got, `"bye"`) != 1 {
		t.Errorf("file:\n%s", got)
	}
}

func TestEditFileCRLF(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"win.txt": "one\r\ntwo\r\nthree\r\n"})
	mustOK(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "win.txt", "old_string", "one\ntwo", "new_string", "uno\ndos")))
	if got := readString(t, filepath.Join(ws, "win.txt")); got != "uno\r\ndos\r\nthree\r\n" {
		t.Errorf("file %q", got)
	}
}

func TestEditFileErrors(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"bin": "a\x00b", "dir/": ""})
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "missing.go", "old_string", "a", "new_string", "b")), "missing.go does not exist; use write_file to create it")
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "bin", "old_string", "a", "new_string", "b")), "bin is a binary file")
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "dir", "old_string", "a", "new_string", "b")), "dir is a directory")
}

func TestSimilarity(t *testing.T) {
	if s := similarity("fmt.Println", "fmt.Println"); s != 1 {
		t.Errorf("same: %v", s)
	}
	if s := similarity("fmt.Println(x)", "fmt.Printn(x)"); s < 0.7 {
		t.Errorf("close: %v", s)
	}
	if s := similarity("abc", "xyz"); s != 0 {
		t.Errorf("far: %v", s)
	}
}
