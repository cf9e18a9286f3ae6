package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for name, content := range files {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func invoke(t *testing.T, tl tool.Tool, ws, args string) tool.Result {
	t.Helper()
	res, err := tl.Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(args), Workspace: ws, Output: os.Stderr})
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Spec().Name, args, err)
	}
	return res
}

func TestSpecsAreValid(t *testing.T) {
	for _, tl := range Tools() {
		if err := tool.ValidateSpec(tl.Spec()); err != nil {
			t.Error(err)
		}
		if len(tl.Spec().PathArguments) == 0 || tl.Spec().Description == "" {
			t.Errorf("%s: no path arguments or description", tl.Spec().Name)
		}
	}
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("line\n", 2500)
	ws := workspace(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n", "empty": "", "bin": "x\x00y", "long.txt": long})
	os.Symlink("/etc/passwd", filepath.Join(ws, "link"))
	cases := []struct {
		args, want string
		isErr      bool
	}{
		{`{"path":"a.go"}`, "     1\tpackage a\n     2\t\n     3\tfunc A() {}\n", false},
		{`{"path":"a.go","offset":3,"limit":1}`, "     3\tfunc A() {}\n", false},
		{`{"path":"a.go","offset":9}`, "offset 9 is past the end", true},
		{`{"path":"empty"}`, "empty is empty.", false},
		{`{"path":"bin"}`, "binary file", true},
		{`{"path":"long.txt"}`, "[truncated: 500 more lines; read on with offset 2001]", false},
		{`{"path":"../x"}`, "outside the workspace", true},
		{`{"path":"link"}`, "outside the workspace", true},
		{`{"path":"nope.go"}`, "cannot read nope.go", true},
		{`{"pth":"a.go"}`, `unknown field "pth"`, true},
	}
	for _, tc := range cases {
		res := invoke(t, readFile{}, ws, tc.args)
		if res.IsError != tc.isErr || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%s: %+v, want %q (error %v)", tc.args, res, tc.want, tc.isErr)
		}
	}
}

func TestWriteAndEdit(t *testing.T) {
	ws := workspace(t, map[string]string{"a.go": "one\ntwo\nthree\ntwo\n"})
	os.Chmod(filepath.Join(ws, "a.go"), 0o600)
	res := invoke(t, editFile{}, ws, `{"path":"a.go","old_string":"three","new_string":"3"}`)
	var meta struct {
		Path, Diff     string
		Added, Removed int
		Created        bool
	}
	json.Unmarshal(res.Metadata, &meta)
	if res.IsError || meta.Path != "a.go" || meta.Added != 1 || meta.Removed != 1 || !strings.Contains(meta.Diff, "-three\n+3\n") {
		t.Fatalf("edit: %+v %+v", res, meta)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.go")); string(b) != "one\ntwo\n3\ntwo\n" {
		t.Fatalf("file is %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "a.go")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode changed to %v", fi.Mode())
	}
	for args, want := range map[string]string{
		`{"path":"a.go","old_string":"two","new_string":"2"}`:   "occurs 2 times",
		`{"path":"a.go","old_string":"four","new_string":"4"}`:  "not found",
		`{"path":"a.go","old_string":"thre","new_string":"x"}`:  "not found",
		`{"path":"a.go","old_string":"one","new_string":"one"}`: "the same",
		`{"path":"../b.go","old_string":"x","new_string":"y"}`:  "outside the workspace",
		`{"path":"a.go","old_string":"","new_string":"y"}`:      "old_string is empty",
	} {
		if r := invoke(t, editFile{}, ws, args); !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %+v, want %q", args, r, want)
		}
	}
	if r := invoke(t, editFile{}, ws, `{"path":"a.go","old_string":"two","new_string":"2","replace_all":true}`); r.IsError {
		t.Errorf("replace_all: %+v", r)
	}
	res = invoke(t, writeFile{}, ws, `{"path":"sub/dir/new.txt","content":"hi\n"}`)
	json.Unmarshal(res.Metadata, &meta)
	if res.IsError || !meta.Created || meta.Added != 1 {
		t.Fatalf("write: %+v %+v", res, meta)
	}
	if r := invoke(t, writeFile{}, ws, `{"path":"/etc/evil","content":"x"}`); !r.IsError {
		t.Error("wrote outside the workspace")
	}
}

func TestListGlobGrep(t *testing.T) {
	ws := workspace(t, map[string]string{
		".gitignore": "build/\n*.log\n", "main.go": "package main\n\nfunc main() {\n\tprintln(\"Ahoy\")\n}\n",
		"pkg/a/a.go": "package a\n// ahoy there\n", "build/out.go": "package out // Ahoy\n", "x.log": "Ahoy\n", ".git/HEAD": "ref\n",
	})
	res := invoke(t, listDir{}, ws, `{"depth":3}`)
	for _, want := range []string{"main.go  (", "pkg/\n", "pkg/a/a.go"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("list lacks %q:\n%s", want, res.Content)
		}
	}
	for _, hidden := range []string{"build", "x.log", ".git/"} {
		if strings.Contains(res.Content, hidden) {
			t.Errorf("list shows ignored %q:\n%s", hidden, res.Content)
		}
	}
	res = invoke(t, globTool{}, ws, `{"pattern":"**/*.go"}`)
	if !strings.Contains(res.Content, "main.go") || !strings.Contains(res.Content, "pkg/a/a.go") || strings.Contains(res.Content, "build") {
		t.Errorf("glob:\n%s", res.Content)
	}
	res = invoke(t, grepTool{}, ws, `{"pattern":"ahoy","ignore_case":true}`)
	if res.Content != "main.go:4:\tprintln(\"Ahoy\")\npkg/a/a.go:2:// ahoy there\n" {
		t.Errorf("grep:\n%q", res.Content)
	}
	res = invoke(t, grepTool{}, ws, `{"pattern":"Ahoy","context":1,"glob":"*.go"}`)
	if !strings.Contains(res.Content, "main.go:3-func main() {") || !strings.Contains(res.Content, "main.go:4:") {
		t.Errorf("grep context:\n%s", res.Content)
	}
	if r := invoke(t, grepTool{}, ws, `{"pattern":"("}`); !r.IsError {
		t.Error("bad regexp accepted")
	}
	if r := invoke(t, grepTool{}, ws, `{"pattern":"a","max_results":1}`); !strings.Contains(r.Content, "[truncated at 1 lines") {
		t.Errorf("cap: %s", r.Content)
	}
}

func TestEditWithPatch(t *testing.T) {
	ws := workspace(t, map[string]string{"a.go": "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"})
	patch := "--- a/a.go\n+++ b/a.go\n@@ -7,3 +7,3 @@\n func B() int {\n-\treturn 1\n+\treturn 2\n }\n"
	res := invoke(t, editFile{}, ws, `{"path":"a.go","patch":`+jsonString(patch)+`}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.go")); !strings.Contains(string(b), "func B() int {\n\treturn 2\n}") || !strings.Contains(string(b), "func A() int {\n\treturn 1") {
		t.Fatalf("patched file:\n%s", b)
	}
	for name, bad := range map[string]string{
		"no match":  "@@ -1,1 +1,1 @@\n-package b\n+package c\n",
		"ambiguous": "@@ -99,1 +99,1 @@\n-}\n+} // end\n",
		"garbage":   "hello\n",
		"no hunks":  "--- a/a.go\n+++ b/a.go\n",
	} {
		if r := invoke(t, editFile{}, ws, `{"path":"a.go","patch":`+jsonString(bad)+`}`); !r.IsError {
			t.Errorf("%s: applied", name)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
