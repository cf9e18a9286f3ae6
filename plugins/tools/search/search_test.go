package search

import (
	"path/filepath"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

// Both tools refuse paths that leave the workspace, by .. or by symlink.
func TestToolsRefuseEscapes(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"in.txt": "secret\n"})
	outside := workspacetest.Tree(t, map[string]string{"secret.txt": "top secret\n"})
	workspacetest.Symlink(t, outside, filepath.Join(ws, "link"))
	rel, _ := filepath.Rel(ws, outside)
	for _, dir := range []string{rel, "link", outside, ".."} {
		mustFail(t, Glob, ws, workspacetest.Args("pattern", "*", "path", dir), "outside the workspace")
		mustFail(t, Grep, ws, workspacetest.Args("pattern", "secret", "path", dir), "outside the workspace")
		mustFail(t, Grep, ws, workspacetest.Args("pattern", "secret", "path", filepath.Join(dir, "secret.txt")), "outside the workspace")
	}
}

func TestBadArguments(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"a.txt": "a\n"})
	cases := []struct {
		name string
		tool wasm.Func
		args string
		want string
	}{
		{"glob", Glob, `{}`, "pattern is required"},
		{"glob", Glob, `{"pattern":"[a-"}`, `pattern "[a-" is not a valid glob`},
		{"glob", Glob, `{"pattern":"/etc/*"}`, `pattern "/etc/*" must be relative (use path to choose the directory)`},
		{"glob", Glob, `{"pattern":"../*"}`, `pattern "../*" must not contain ..`},
		{"glob", Glob, `{"pattern":"*","depth":2}`, `arguments: json: unknown field "depth"`},
		{"glob", Glob, `{"pattern":7}`, "cannot unmarshal number"},
		{"grep", Grep, `{}`, "pattern is required"},
		{"grep", Grep, `{"pattern":"a("}`, "pattern is not a valid RE2 regular expression: error parsing regexp: missing closing )"},
		{"grep", Grep, `{"pattern":"(?<=a)b"}`, "not a valid RE2"},
		{"grep", Grep, `{"pattern":"a","context":6}`, "context must be 0 to 5, got 6"},
		{"grep", Grep, `{"pattern":"a","context":-1}`, "context must be 0 to 5"},
		{"grep", Grep, `{"pattern":"a","max_results":0}`, "max_results must be 1 to 2000, got 0"},
		{"grep", Grep, `{"pattern":"a","max_results":5000}`, "max_results must be 1 to 2000"},
		{"grep", Grep, `{"pattern":"a","glob":"{a"}`, "not a valid glob"},
		{"grep", Grep, `{"pattern":"a","include":"*.go"}`, `arguments: json: unknown field "include"`},
		{"grep", Grep, `{"pattern":"a","ignore_case":"yes"}`, "cannot unmarshal string"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" "+tc.args, func(t *testing.T) {
			mustFail(t, tc.tool, ws, tc.args, tc.want)
		})
	}
}

// Without a workspace (a call the kernel made without one) both tools say
// so rather than searching the guest's empty root.
func TestNoWorkspace(t *testing.T) {
	mustFail(t, Glob, "", `{"pattern":"*"}`, "the kernel gave no absolute workspace")
	mustFail(t, Grep, "", `{"pattern":"a"}`, "the kernel gave no absolute workspace")
}
