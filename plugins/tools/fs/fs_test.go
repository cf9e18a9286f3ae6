package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func TestSpecs(t *testing.T) {
	want := map[string]struct {
		risk  tool.Risk
		paths []string
	}{
		"read_file":  {tool.RiskReadOnly, []string{"path"}},
		"write_file": {tool.RiskMutating, []string{"path"}},
		"edit_file":  {tool.RiskMutating, []string{"path"}},
		"list_dir":   {tool.RiskReadOnly, []string{"path"}},
	}
	for _, tl := range Tools() {
		s := tl.Spec()
		if err := tool.ValidateSpec(s); err != nil {
			t.Error(err)
		}
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected tool %s", s.Name)
			continue
		}
		delete(want, s.Name)
		if s.Risk != w.risk || !cmp.Equal(s.PathArguments, w.paths) {
			t.Errorf("%s: risk %s, path arguments %v", s.Name, s.Risk, s.PathArguments)
		}
		if len(s.Description) < 200 {
			t.Errorf("%s: description too thin: %q", s.Name, s.Description)
		}
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range s.PathArguments {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("%s: path argument %s is not in the schema", s.Name, p)
			}
		}
	}
	for name := range want {
		t.Errorf("missing tool %s", name)
	}
}

// Every tool refuses paths that leave the workspace, by .. or by symlink.
func TestEveryToolRefusesEscapes(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"in.txt": "hello\n"})
	outside := workspacetest.Tree(t, map[string]string{"secret.txt": "top secret\n"})
	workspacetest.Symlink(t, outside, filepath.Join(ws, "link"))
	rel, _ := filepath.Rel(ws, outside)
	for _, p := range []string{rel + "/secret.txt", "link/secret.txt", filepath.Join(outside, "secret.txt")} {
		dir := filepath.Dir(p)
		calls := map[tool.Tool]string{
			readFile{}:  workspacetest.Args("path", p),
			writeFile{}: workspacetest.Args("path", p, "content", "pwned"),
			editFile{}:  workspacetest.Args("path", p, "old_string", "top", "new_string", "pwned"),
			listDir{}:   workspacetest.Args("path", dir),
		}
		for tl, a := range calls {
			mustFail(t, invoke(t, tl, ws, a), "outside the workspace")
		}
	}
	if got := readString(t, filepath.Join(outside, "secret.txt")); got != "top secret\n" {
		t.Fatalf("the file outside was changed: %q", got)
	}
}

func TestBadArguments(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"a.txt": "a\n"})
	cases := []struct {
		tool tool.Tool
		args string
		want string
	}{
		{readFile{}, `{"path":"a.txt","lines":3}`, `unknown field "lines"`},
		{readFile{}, `{}`, "path is required"},
		{readFile{}, `{"path":7}`, "cannot unmarshal number"},
		{readFile{}, `{"path":"a.txt","offset":0}`, "offset must be 1 to"},
		{readFile{}, `{"path":"a.txt","limit":0}`, "limit must be at least 1"},
		{readFile{}, `{"path":"a.txt","offset":"2"}`, "cannot unmarshal string"},
		{writeFile{}, `{"path":"b.txt"}`, "content is required"},
		{writeFile{}, `{"content":"x"}`, "path is required"},
		{writeFile{}, `{"path":"b.txt","content":"x","mode":"0755"}`, `unknown field "mode"`},
		{editFile{}, `{"path":"a.txt"}`, "give old_string and new_string, or patch"},
		{editFile{}, `{"path":"a.txt","old_string":"a"}`, "new_string is required"},
		{editFile{}, `{"path":"a.txt","new_string":"a"}`, "old_string is required"},
		{editFile{}, `{"path":"a.txt","old_string":"","new_string":"b"}`, "old_string is empty"},
		{editFile{}, `{"path":"a.txt","old_string":"a","new_string":"a"}`, "identical"},
		{editFile{}, `{"path":"a.txt","old_string":"a","new_string":"b","patch":"@@ -1 +1 @@"}`, "not both"},
		{editFile{}, `{"path":"a.txt","patch":"  "}`, "patch is empty"},
		{editFile{}, `{"path":"a.txt","old_str":"a","new_string":"b"}`, `unknown field "old_str"`},
		{listDir{}, `{"depth":0}`, "depth must be 1 to 5, got 0"},
		{listDir{}, `{"depth":6}`, "depth must be 1 to 5, got 6"},
		{listDir{}, `{"recursive":true}`, `unknown field "recursive"`},
	}
	for _, tc := range cases {
		t.Run(tc.tool.Spec().Name+" "+tc.args, func(t *testing.T) {
			mustFail(t, invoke(t, tc.tool, ws, tc.args), tc.want)
		})
	}
	if got := readString(t, filepath.Join(ws, "a.txt")); got != "a\n" {
		t.Errorf("a bad call changed a.txt: %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("a bad call created b.txt")
	}
}

// File tools never reach for the Host, and a missing workspace is an
// error result.
func TestNoWorkspace(t *testing.T) {
	calls := map[tool.Tool]string{
		readFile{}: `{"path":"a"}`, writeFile{}: `{"path":"a","content":""}`,
		editFile{}: `{"path":"a","old_string":"a","new_string":"b"}`, listDir{}: `{}`,
	}
	for tl, a := range calls {
		mustFail(t, invoke(t, tl, "", a), "the kernel gave no absolute workspace")
	}
}

func TestSpecialFilesAndGitAreRefused(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{".git/config": "[core]\n", "a.txt": "a\n"})
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A FIFO would block a reader forever.
	mustFail(t, invoke(t, readFile{}, ws, workspacetest.Args("path", "pipe")), "pipe is not a regular file")
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", "pipe", "old_string", "a", "new_string", "b")), "pipe is not a regular file")
	mustFail(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", "pipe", "content", "b")), "pipe is not a regular file")
	// A directory walk lists it but never opens it.
	if got := mustOK(t, invoke(t, listDir{}, ws, `{}`)); got != "a.txt (2 B)\npipe (p---------)\n" {
		t.Errorf("list_dir: %q", got)
	}
	// .git is the checkpoints' store: never written by file tools.
	mustFail(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", ".git/config", "content", "x")), "inside .git")
	mustFail(t, invoke(t, editFile{}, ws, workspacetest.Args("path", ".git/config", "old_string", "core", "new_string", "x")), "inside .git")
	mustFail(t, invoke(t, writeFile{}, ws, workspacetest.Args("path", "sub/.git/hooks/pre-commit", "content", "x")), "inside .git")
	if got := readString(t, filepath.Join(ws, ".git", "config")); got != "[core]\n" {
		t.Errorf(".git/config changed: %q", got)
	}
}
