package pluginhost_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

const exampleDir = "../../examples/hello-tool"

// TestOutOfTreePlugin proves a third party can build a plugin against the
// SDK alone: the example module is built on its own (GOWORK=off, its own
// go.mod), discovered, launched and called like any installed plugin.
func TestOutOfTreePlugin(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	assertSDKOnly(t)
	dir := filepath.Join(t.TempDir(), "hello-tool")
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "hello-tool"), ".")
	cmd.Dir = exampleDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build example: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(exampleDir, pluginhost.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pluginhost.ManifestFile), src, 0o644); err != nil {
		t.Fatal(err)
	}
	ms, diags := pluginhost.Discover([]string{filepath.Dir(dir)})
	if diags.HasErrors() || len(ms) != 1 {
		t.Fatalf("discover: %v %v", ms, diags)
	}
	var ran [][]string
	h, err := pluginhost.New(pluginhost.Options{
		Exec: func(ctx context.Context, token string, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
			if token != "call-2" {
				t.Errorf("host exec with token %q", token)
			}
			ran = append(ran, req.Argv)
			c := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
			c.Stdout, c.Stderr = sio.Stdout, sio.Stderr
			err := c.Run()
			return sandbox.Exit{Code: c.ProcessState.ExitCode()}, err
		},
	}, []pluginhost.Spec{{Manifest: ms[0]}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	p, err := h.Start(ctx, "hello-tool")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := p.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		byName[tl.Spec().Name] = tl
	}
	greet, shout := byName["greet"], byName["shout"]
	if greet == nil || shout == nil {
		t.Fatalf("tools = %v", byName)
	}
	if greet.Spec().Risk != tool.RiskReadOnly || shout.Spec().Risk != tool.RiskExec || !strings.Contains(greet.Spec().Description, "pirate") {
		t.Errorf("specs: %+v / %+v", greet.Spec(), shout.Spec())
	}
	var progress strings.Builder
	res, err := greet.Invoke(ctx, &tool.Call{ID: "call-1", Arguments: []byte(`{"name":"Ada"}`), Output: &progress})
	if err != nil || res.Content != "Ahoy, Ada!" || progress.String() != "hoisting the greeting for Ada\n" {
		t.Fatalf("greet = %+v, %v, progress %q", res, err, progress.String())
	}
	res, err = shout.Invoke(ctx, &tool.Call{ID: "call-2", Arguments: []byte(`{"message":"land ho"}`), Output: io.Discard, Token: "call-2"})
	if err != nil || res.Content != "LAND HO" {
		t.Fatalf("shout = %+v, %v", res, err)
	}
	if len(ran) != 1 || strings.Join(ran[0], " ") != "echo land ho" {
		t.Fatalf("host ran %v", ran)
	}
}

// assertSDKOnly checks the example's module graph: it requires the SDK and
// imports nothing of the kernel.
func assertSDKOnly(t *testing.T) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(exampleDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "github.com/sparrow-cli/sparrow/sdk") || strings.Contains(string(gomod), "sparrow/kernel") {
		t.Fatalf("example go.mod must require the sdk and not the kernel:\n%s", gomod)
	}
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Dir = exampleDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/sparrow-cli/sparrow/") && !strings.HasPrefix(pkg, "github.com/sparrow-cli/sparrow/sdk") {
			t.Errorf("the example depends on %s; plugins may import the sdk only", pkg)
		}
	}
}
