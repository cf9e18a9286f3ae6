package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func changeOf(t *testing.T, res tool.Result) change {
	t.Helper()
	var c change
	dec := json.NewDecoder(strings.NewReader(string(res.Metadata)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("metadata %s: %v", res.Metadata, err)
	}
	return c
}

func TestWriteFileCreates(t *testing.T) {
	ws := workspacetest.Tree(t, nil)
	res := invoke(t, writeFile{}, ws, workspacetest.Args("path", "new/deep/a.txt", "content", "one\ntwo\n"))
	if got := mustOK(t, res); got != "Created new/deep/a.txt (2 lines, 8 bytes)." {
		t.Errorf("content %q", got)
	}
	want := change{Path: "new/deep/a.txt", Created: true, Added: 2,
		Diff: "--- /dev/null\n+++ b/new/deep/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"}
	if d := cmp.Diff(want, changeOf(t, res)); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	abs := filepath.Join(ws, "new", "deep", "a.txt")
	if got := readString(t, abs); got != "one\ntwo\n" {
		t.Errorf("file %q", got)
	}
	if fi, _ := os.Stat(abs); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v", fi.Mode())
	}
	// An empty file can be created too.
	mustOK(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", "empty", "content", "")))
	if fi, err := os.Stat(filepath.Join(ws, "empty")); err != nil || fi.Size() != 0 {
		t.Errorf("empty file: %v %v", fi, err)
	}
}

func TestWriteFileReplacesKeepingMode(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"run.sh": "#!/bin/sh\necho old\nexit 0\n"})
	abs := filepath.Join(ws, "run.sh")
	if err := os.Chmod(abs, 0o751); err != nil {
		t.Fatal(err)
	}
	res := invoke(t, writeFile{}, ws, workspacetest.Args("path", "run.sh", "content", "#!/bin/sh\necho new\nexit 0\n"))
	if got := mustOK(t, res); got != "Updated run.sh (+1 -1 lines)." {
		t.Errorf("content %q", got)
	}
	want := change{Path: "run.sh", Added: 1, Removed: 1,
		Diff: "--- a/run.sh\n+++ b/run.sh\n@@ -1,3 +1,3 @@\n #!/bin/sh\n-echo old\n+echo new\n exit 0\n"}
	if d := cmp.Diff(want, changeOf(t, res)); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	if fi, _ := os.Stat(abs); fi.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751 kept", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestWriteFileThroughSymlinkInside(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"real.txt": "old\n"})
	workspacetest.Symlink(t, "real.txt", filepath.Join(ws, "link.txt"))
	res := invoke(t, writeFile{}, ws, workspacetest.Args("path", "link.txt", "content", "new\n"))
	if changeOf(t, res).Path != "real.txt" {
		t.Errorf("metadata path should be the real file: %s", res.Metadata)
	}
	if got := readString(t, filepath.Join(ws, "real.txt")); got != "new\n" {
		t.Errorf("target %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(ws, "link.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced")
	}
}

func TestWriteFileUnchangedAndErrors(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"same.txt": "x\n", "dir/": ""})
	res := invoke(t, writeFile{}, ws, workspacetest.Args("path", "same.txt", "content", "x\n"))
	if got := mustOK(t, res); got != "same.txt is unchanged: the new content is identical." || changeOf(t, res).Diff != "" {
		t.Errorf("got %q %s", got, res.Metadata)
	}
	mustFail(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", "dir", "content", "x")), "dir is a directory")
	mustFail(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", ".", "content", "x")), "is the workspace itself")
	if err := os.Chmod(filepath.Join(ws, "dir"), 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(ws, "dir"), 0o755)
	if os.Getuid() != 0 {
		mustFail(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", "dir/x.txt", "content", "x")), "cannot write dir/x.txt")
	}
}

func TestAtomicWriteLeavesOldFileOnFailure(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"a.txt": "old\n"})
	// Renaming over a non-empty directory fails after the temp file was
	// written: the temp file must go and nothing else change.
	workspacetest.Mkdir(t, filepath.Join(ws, "d", "child"))
	if err := atomicWrite(filepath.Join(ws, "d"), []byte("x")); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	entries, _ := os.ReadDir(ws)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if d := cmp.Diff([]string{"a.txt", "d"}, names); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
}
