package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		"glob":       {tool.RiskReadOnly, []string{"path"}},
		"grep":       {tool.RiskReadOnly, []string{"path"}},
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

func TestResolve(t *testing.T) {
	ws := tree(t, map[string]string{"a/b.txt": "x", "secret/": ""})
	outside := tree(t, map[string]string{"passwd": "root"})
	symlink(t, outside, filepath.Join(ws, "escape"))
	symlink(t, filepath.Join(outside, "passwd"), filepath.Join(ws, "a", "pw"))
	symlink(t, filepath.Join(outside, "missing"), filepath.Join(ws, "dangling"))
	symlink(t, "b.txt", filepath.Join(ws, "a", "inner"))
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
		{path: "dangling", err: "symlink to a missing target"},
		{path: "dangling/x", err: "symlink to a missing target"},
		{path: "a\x00b", err: "NUL"},
	}
	for _, tc := range cases {
		got, err := resolve(ws, tc.path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("resolve(%q) = %+v, %v; want error %q", tc.path, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.rel != tc.rel || got.root != root {
			t.Errorf("resolve(%q) = %+v, %v; want rel %q", tc.path, got, err, tc.rel)
		}
	}
	if _, err := resolve("relative/ws", "a"); err == nil {
		t.Error("a relative workspace was accepted")
	}
}

// Every tool refuses paths that leave the workspace, by .. or by symlink.
func TestEveryToolRefusesEscapes(t *testing.T) {
	ws := tree(t, map[string]string{"in.txt": "hello\n"})
	outside := tree(t, map[string]string{"secret.txt": "top secret\n"})
	symlink(t, outside, filepath.Join(ws, "link"))
	rel, _ := filepath.Rel(ws, outside)
	for _, p := range []string{rel + "/secret.txt", "link/secret.txt", filepath.Join(outside, "secret.txt")} {
		dir := filepath.Dir(p)
		calls := map[tool.Tool]string{
			readFile{}:  args("path", p),
			writeFile{}: args("path", p, "content", "pwned"),
			editFile{}:  args("path", p, "old_string", "top", "new_string", "pwned"),
			listDir{}:   args("path", dir),
			globTool{}:  args("pattern", "*", "path", dir),
			grepTool{}:  args("pattern", "secret", "path", dir),
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
	ws := tree(t, map[string]string{"a.txt": "a\n"})
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
		{globTool{}, `{}`, "pattern is required"},
		{globTool{}, `{"pattern":"[a-"}`, "not a valid glob"},
		{globTool{}, `{"pattern":"/etc/*"}`, "must be relative"},
		{globTool{}, `{"pattern":"../*"}`, "must not contain .."},
		{grepTool{}, `{}`, "pattern is required"},
		{grepTool{}, `{"pattern":"a("}`, "not a valid RE2"},
		{grepTool{}, `{"pattern":"(?<=a)b"}`, "not a valid RE2"},
		{grepTool{}, `{"pattern":"a","context":6}`, "context must be 0 to 5, got 6"},
		{grepTool{}, `{"pattern":"a","context":-1}`, "context must be 0 to 5"},
		{grepTool{}, `{"pattern":"a","max_results":0}`, "max_results must be 1 to 2000, got 0"},
		{grepTool{}, `{"pattern":"a","max_results":5000}`, "max_results must be 1 to 2000"},
		{grepTool{}, `{"pattern":"a","glob":"{a"}`, "not a valid glob"},
		{grepTool{}, `{"pattern":"a","include":"*.go"}`, `unknown field "include"`},
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
		globTool{}: `{"pattern":"*"}`, grepTool{}: `{"pattern":"a"}`,
	}
	for tl, a := range calls {
		mustFail(t, invoke(t, tl, "", a), "the kernel gave no absolute workspace")
	}
}

func TestSpecialFilesAndGitAreRefused(t *testing.T) {
	ws := tree(t, map[string]string{".git/config": "[core]\n", "a.txt": "a\n"})
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A FIFO would block a reader forever.
	mustFail(t, invoke(t, readFile{}, ws, args("path", "pipe")), "pipe is not a regular file")
	mustFail(t, invoke(t, grepTool{}, ws, args("pattern", "x", "path", "pipe")), "pipe is not a regular file")
	mustFail(t, invoke(t, editFile{}, ws, args("path", "pipe", "old_string", "a", "new_string", "b")), "pipe is not a regular file")
	mustFail(t, invoke(t, writeFile{}, ws, args("path", "pipe", "content", "b")), "pipe is not a regular file")
	// A directory walk lists it but never opens it.
	if got := mustOK(t, invoke(t, grepTool{}, ws, args("pattern", "a"))); got != "a.txt:1:a\n" {
		t.Errorf("grep: %q", got)
	}
	// .git is the checkpoints' store: never written by file tools.
	mustFail(t, invoke(t, writeFile{}, ws, args("path", ".git/config", "content", "x")), "inside .git")
	mustFail(t, invoke(t, editFile{}, ws, args("path", ".git/config", "old_string", "core", "new_string", "x")), "inside .git")
	mustFail(t, invoke(t, writeFile{}, ws, args("path", "sub/.git/hooks/pre-commit", "content", "x")), "inside .git")
	if got := readString(t, filepath.Join(ws, ".git", "config")); got != "[core]\n" {
		t.Errorf(".git/config changed: %q", got)
	}
}
