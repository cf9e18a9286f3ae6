package fs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

const patchBase = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"

func TestApplyPatch(t *testing.T) {
	cases := []struct {
		name, content, patch, want string
	}{
		{"one hunk with headers", patchBase,
			"--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n",
			"a\nb\nC\nd\ne\nf\ng\nh\ni\nj\n"},
		{"git headers", patchBase,
			"diff --git a/f.txt b/f.txt\nindex 123..456 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+A\n",
			"A\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"},
		{"two hunks", patchBase,
			"@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -9,2 +9,3 @@\n i\n j\n+k\n",
			"A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"},
		{"stated line is off: unique match elsewhere", patchBase,
			"@@ -1,3 +1,3 @@\n e\n-f\n+F\n g\n",
			"a\nb\nc\nd\ne\nF\ng\nh\ni\nj\n"},
		{"counts are not checked", patchBase,
			"@@ -4,99 +4,1 @@\n d\n-e\n",
			"a\nb\nc\nd\nf\ng\nh\ni\nj\n"},
		{"pure insertion after line 2", patchBase,
			"@@ -2,0 +3,1 @@\n+new\n",
			"a\nb\nnew\nc\nd\ne\nf\ng\nh\ni\nj\n"},
		{"into an empty file", "",
			"--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n",
			"x\ny\n"},
		{"empty context line without its space", "a\n\nb\n",
			"@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n",
			"a\n\nB\n"},
		{"adds a final newline", "a\nb",
			"@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
			"a\nb\n"},
		{"drops the final newline", "a\nb\n",
			"@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n",
			"a\nb"},
		{"keeps a missing final newline", "a\nb",
			"@@ -1 +1 @@\n-a\n+A\n",
			"A\nb"},
		{"removed line that starts with dashes", "x\n-- c\ny\n",
			"@@ -1,3 +1,3 @@\n x\n--- c\n+++ d\n y\n",
			"x\n++ d\ny\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := applyPatch(tc.content, tc.patch, "f.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestApplyPatchRefuses(t *testing.T) {
	cases := []struct {
		name, content, patch, want string
	}{
		{"context does not match", patchBase, "@@ -2,3 +2,3 @@\n b\n-x\n+X\n d\n",
			`hunk 1 (@@ -2,3 +2,3 @@): its context and removed lines do not match the file (at line 3 the file has "c", the patch expects "x")`},
		{"ambiguous away from the stated line", "x\ny\nx\ny\n", "@@ -7,2 +7,2 @@\n x\n-y\n+Y\n",
			"match at line 1 and line 3; add context lines"},
		{"no hunks", patchBase, "--- a/f.txt\n+++ b/f.txt\n", "the patch has no @@ hunks"},
		{"not a diff", patchBase, "replace c with C", "the patch has no @@ hunks"},
		{"bad header", patchBase, "@@ -x +y @@\n-a\n", `patch line 1: bad hunk header "@@ -x +y @@"`},
		{"bad body line", patchBase, "@@ -1 +1 @@\n-a\n*a\n", `patch line 3: a hunk line must start with ' ', '-' or '+', got "*a"`},
		{"another file", patchBase, "--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-a\n+A\n", "the patch is for g.txt, not f.txt"},
		{"two files", patchBase, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-a\n+A\n",
			"the patch changes more than one file"},
		{"insertion past the end", "a\n", "@@ -5,0 +6 @@\n+z\n", "it inserts after line 5, but the file has 1 lines"},
		{"second hunk fails: all or nothing", patchBase, "@@ -1 +1 @@\n-a\n+A\n@@ -5 +5 @@\n-E\n+e\n", "hunk 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := applyPatch(tc.content, tc.patch, "f.txt")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEditFilePatch(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"f.txt": patchBase})
	abs := filepath.Join(ws, "f.txt")
	res := invoke(t, editFile{}, ws, workspacetest.Args("path", "f.txt", "patch", "--- a/f.txt\n+++ b/f.txt\n@@ -3 +3 @@\n-c\n+C\n"))
	if got := mustOK(t, res); got != "Applied 1 hunk(s). Updated f.txt (+1 -1 lines)." {
		t.Errorf("content %q", got)
	}
	if c := changeOf(t, res); c.Added != 1 || c.Removed != 1 || !strings.Contains(c.Diff, "-c\n+C\n") {
		t.Errorf("metadata %+v", c)
	}
	// A patch that does not apply leaves the file alone.
	before := readString(t, abs)
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "f.txt", "patch", "@@ -1 +1 @@\n-A\n+a\n@@ -3 +3 @@\n-zz\n+C\n")),
		"the patch does not apply to f.txt, nothing was changed: hunk 1")
	if readString(t, abs) != before {
		t.Error("a failed patch changed the file")
	}
}
