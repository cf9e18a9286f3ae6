package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/wasmtool"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// jsonToolSrc is examples/json-tool, a third-party WASM tool plugin in its
// own module, built against sdk only.
var jsonToolSrc = filepath.Join("..", "..", "examples", "json-tool")

// jsonTool is the example's module, built once per test process and kept
// in memory, so no build directory outlives the tests.
var jsonTool struct {
	once sync.Once
	wasm []byte
	err  error
}

// jsonToolModule builds examples/json-tool for wasip1 the way its README
// says, with GOWORK=off so it builds as its own module.
func jsonToolModule() ([]byte, error) {
	jsonTool.once.Do(func() {
		dir, err := os.MkdirTemp("", "sparrow-test-json-tool-")
		if err != nil {
			jsonTool.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "json-tool.wasm")
		cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
		cmd.Dir = jsonToolSrc
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			jsonTool.err = &buildError{out: string(b), err: err}
			return
		}
		jsonTool.wasm, jsonTool.err = os.ReadFile(out)
	})
	return jsonTool.wasm, jsonTool.err
}

// buildJSONTool builds examples/json-tool once and lays it out for
// `sparrow plugin package` in DIR: a WASM plugin has one platform, so
// plugin.hcl, json-tool.wasm and README.md all sit at the top level.
//
//	jsontool DIR
func buildJSONTool(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsontool DIR")
	}
	module, err := jsonToolModule()
	if err != nil {
		ts.Fatalf("build json-tool: %v", err)
	}
	dst := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dst, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dst, "json-tool.wasm"), module, 0o644))
	for _, name := range []string{"plugin.hcl", "README.md"} {
		b, err := os.ReadFile(filepath.Join(jsonToolSrc, name))
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(dst, name), b, 0o644))
	}
}

// The example's manifest is one Sparrow accepts, and says what the README
// promises: json_get read-only, json_set mutating, both with path
// arguments, and no grants.
func TestJSONToolManifest(t *testing.T) {
	m, diags := pluginhost.ReadManifest(filepath.Join(jsonToolSrc, "plugin.hcl"))
	if diags.HasErrors() {
		t.Fatalf("plugin.hcl: %v", diags)
	}
	if m.Runtime != pluginhost.RuntimeWASM || filepath.Base(m.Entry) != "json-tool.wasm" {
		t.Errorf("runtime %q entry %q, want wasm json-tool.wasm", m.Runtime, filepath.Base(m.Entry))
	}
	if c := m.Capabilities; c.Clock || c.Random || c.Network || c.Workspace || len(c.Paths)+len(c.Env) > 0 {
		t.Errorf("capabilities = %+v, want none", c)
	}
	want := map[string]tool.Risk{"json_get": tool.RiskReadOnly, "json_set": tool.RiskMutating}
	if len(m.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(m.Tools), len(want))
	}
	for _, wt := range m.Tools {
		if err := tool.ValidateSpec(wt.Spec); err != nil {
			t.Error(err)
		}
		if wt.Spec.Risk != want[wt.Spec.Name] {
			t.Errorf("%s risk %q, want %q", wt.Spec.Name, wt.Spec.Risk, want[wt.Spec.Name])
		}
		if !slices.Equal(wt.Spec.PathArguments, []string{"path"}) {
			t.Errorf("%s path arguments %q, want [path]", wt.Spec.Name, wt.Spec.PathArguments)
		}
	}
}

// The built module under wazero, called the way the plugin host calls it:
// one module, the tool named in the request. json_get reads through the
// read-only mount and cannot see hidden paths; json_set cannot write
// through the read-only mount and says why, and once the workspace is
// writable its atomic write (temp file and rename) works under WASI and
// leaves nothing behind.
func TestJSONToolUnderWazero(t *testing.T) {
	module, err := jsonToolModule()
	if err != nil {
		t.Fatalf("build json-tool: %v", err)
	}
	ctx := context.Background()
	rt, err := wasmtool.New(ctx, wasmtool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Load(ctx, module, "json-tool", wasmtool.Grants{})
	if err != nil {
		t.Fatal(err)
	}

	const original = "{\n    \"name\": \"demo\",\n    \"version\": \"1.0.0\"\n}\n"
	ws := t.TempDir()
	file := filepath.Join(ws, "package.json")
	if err := os.WriteFile(file, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".secrets.json"), []byte(`{"token": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hide := func(rel string) bool { return rel == ".secrets.json" }
	tests := []struct {
		name     string
		tool     string
		args     string
		writable bool
		want     wasmtool.Result
		wantFile string
	}{
		{name: "json_get reads the read-only workspace", tool: "json_get",
			args: `{"path": "package.json", "pointer": "/name"}`,
			want: wasmtool.Result{Output: `"demo"`}, wantFile: original},
		{name: "json_get stays inside the workspace", tool: "json_get",
			args: `{"path": "../package.json", "pointer": ""}`,
			want: wasmtool.Result{Error: `path "../package.json" leaves the workspace; give a path inside it`}, wantFile: original},
		{name: "json_get cannot see a hidden path", tool: "json_get",
			args: `{"path": ".secrets.json", "pointer": "/token"}`,
			want: wasmtool.Result{Error: ".secrets.json does not exist in the workspace"}, wantFile: original},
		{name: "json_set cannot write a read-only workspace", tool: "json_set",
			args: `{"path": "package.json", "pointer": "/version", "value": "1.1.0"}`,
			want: wasmtool.Result{Error: "cannot write package.json: the workspace is read-only for this call"}, wantFile: original},
		{name: "json_set writes once the workspace is writable", tool: "json_set", writable: true,
			args:     `{"path": "package.json", "pointer": "/version", "value": "1.1.0"}`,
			want:     wasmtool.Result{Output: `set /version in package.json: "1.0.0" → "1.1.0"`},
			wantFile: "{\n    \"name\": \"demo\",\n    \"version\": \"1.1.0\"\n}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := mod.Call(ctx, wasmtool.Call{Tool: tc.tool, Args: []byte(tc.args), Workspace: ws, Writable: tc.writable, Hide: hide})
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != tc.want.Output || res.Error != tc.want.Error {
				t.Errorf("result %+v, want %+v", res, tc.want)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.wantFile {
				t.Errorf("package.json:\n%s\nwant:\n%s", b, tc.wantFile)
			}
			entries, err := os.ReadDir(ws)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 2 {
				t.Errorf("workspace holds %d entries, want only package.json and .secrets.json", len(entries))
			}
		})
	}
}
