package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// exampleDir is the third-party example plugin, a module of its own.
const exampleDir = "../../examples/hello-tool"

const (
	sparrowModules = "github.com/sparrow-cli/sparrow/"
	sdkModule      = "github.com/sparrow-cli/sparrow/sdk"
)

// TestOutOfTreePlugin proves a third party can build a plugin against the
// SDK alone: the example module is built on its own (GOWORK=off, its own
// go.mod and go.sum, -mod=readonly), discovered from its manifest,
// launched through the verified plugin host and called like any installed
// plugin, including a callback into the kernel's Host service.
func TestOutOfTreePlugin(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command on PATH")
	}
	assertSDKOnly(t, goCmd)

	root := t.TempDir()
	dir := filepath.Join(root, "hello-tool")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(exampleDir, pluginhost.ManifestFile), filepath.Join(dir, pluginhost.ManifestFile))
	build := exec.Command(goCmd, "build", "-o", filepath.Join(dir, "hello-tool"), ".")
	build.Dir = exampleDir
	build.Env = standalone()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the example on its own: %v\n%s", err, out)
	}

	ms, diags := pluginhost.Discover([]string{root})
	if diags.HasErrors() || len(ms) != 1 || ms[0].Name != "hello-tool" {
		t.Fatalf("discover: %v %v", ms, diags)
	}
	host := &osExec{}
	h, err := pluginhost.New(pluginhost.Options{SparrowVersion: "test", Exec: host.run}, []pluginhost.Spec{{Manifest: ms[0]}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	ctx := t.Context()
	p, err := h.Start(ctx, "hello-tool")
	if err != nil {
		t.Fatal(err)
	}
	if p.Info.SDKVersion != sdk.Version || len(p.Info.Components) != 2 {
		t.Errorf("info = %+v", p.Info)
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
	if len(byName) != 2 || greet == nil || shout == nil {
		t.Fatalf("tools = %v", byName)
	}
	for _, c := range []struct {
		tl   tool.Tool
		risk tool.Risk
		doc  string
	}{{greet, tool.RiskReadOnly, "greet.md"}, {shout, tool.RiskExec, "shout.md"}} {
		spec := c.tl.Spec()
		doc, err := os.ReadFile(filepath.Join(exampleDir, c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if spec.Risk != c.risk || spec.Description != string(doc) {
			t.Errorf("%s: risk %q, description %q; want %q and the embedded %s", spec.Name, spec.Risk, spec.Description, c.risk, c.doc)
		}
	}

	t.Run("greet streams progress and answers", func(t *testing.T) {
		var progress strings.Builder
		res, err := greet.Invoke(ctx, &tool.Call{ID: "call-1", Arguments: []byte(`{"name":"Ada"}`), Output: &progress})
		if err != nil || res.IsError || res.Content != "Ahoy, Ada!" {
			t.Fatalf("greet = %+v, %v", res, err)
		}
		if progress.String() != "hoisting the greeting for Ada\n" {
			t.Errorf("progress = %q", progress.String())
		}
	})

	t.Run("shout runs echo through the Host service", func(t *testing.T) {
		res, err := shout.Invoke(ctx, &tool.Call{ID: "call-2", Arguments: []byte(`{"message":"land ho"}`), Token: "tok-call-2"})
		if err != nil || res.IsError || res.Content != "LAND HO" {
			t.Fatalf("shout = %+v, %v", res, err)
		}
		if got := host.calls(); len(got) != 1 || got[0] != "tok-call-2: echo land ho" {
			t.Fatalf("host ran %q, want one echo with the call's token", got)
		}
	})

	t.Run("a refusal reaches the model", func(t *testing.T) {
		res, err := shout.Invoke(ctx, &tool.Call{ID: "call-3", Arguments: []byte(`{"message":"x"}`), Token: "deny"})
		if err != nil || !res.IsError || res.Content != "echo exited 126: sparrow: not run: denied for this test" {
			t.Fatalf("shout = %+v, %v", res, err)
		}
	})

	t.Run("no token, no Host", func(t *testing.T) {
		before := len(host.calls())
		_, err := shout.Invoke(ctx, &tool.Call{ID: "call-4", Arguments: []byte(`{"message":"x"}`)})
		if err == nil || !strings.Contains(err.Error(), "the kernel granted this call no Host access") || !strings.Contains(err.Error(), "plugin hello-tool") {
			t.Fatalf("err = %v", err)
		}
		if len(host.calls()) != before {
			t.Error("a call without a token reached the Host handler")
		}
	})
}

// osExec is a Host handler that really runs the command, as a sandbox
// would, refusing calls whose token is "deny" the way the gate does.
type osExec struct {
	mu  sync.Mutex
	ran []string
}

func (o *osExec) run(ctx context.Context, token string, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	o.mu.Lock()
	o.ran = append(o.ran, token+": "+strings.Join(req.Argv, " "))
	o.mu.Unlock()
	if token == "deny" {
		fmt.Fprintln(sio.Stderr, "sparrow: not run: denied for this test")
		return sandbox.Exit{Code: 126}, nil
	}
	cmd := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	cmd.Dir = req.Workdir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = sio.Stdin, sio.Stdout, sio.Stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return sandbox.Exit{}, nil
	case errors.As(err, &exitErr):
		return sandbox.Exit{Code: exitErr.ExitCode()}, nil
	default:
		fmt.Fprintf(sio.Stderr, "cannot run %s: %v\n", req.Argv[0], err)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
}

func (o *osExec) calls() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.ran...)
}

// standalone is the environment of a build outside this repository: no
// workspace, and go.mod and go.sum must already be complete.
func standalone() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// assertSDKOnly checks the example's module boundary three ways: its
// go.mod requires the SDK and no other Sparrow module, no .go file under
// it (tests and every build tag included) imports a Sparrow package outside
// the SDK, and neither does anything it depends on.
func assertSDKOnly(t *testing.T, goCmd string) {
	t.Helper()
	edit := exec.Command(goCmd, "mod", "edit", "-json")
	edit.Dir = exampleDir
	edit.Env = standalone()
	out, err := edit.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	requiresSDK := false
	for _, r := range mod.Require {
		requiresSDK = requiresSDK || r.Path == sdkModule
		if strings.HasPrefix(r.Path, sparrowModules) && r.Path != sdkModule {
			t.Errorf("the example's go.mod requires %s; a plugin may depend on the SDK only", r.Path)
		}
	}
	if mod.Module.Path != "example.com/hello-tool" || !requiresSDK {
		t.Errorf("go.mod: module %q, requires the SDK: %v", mod.Module.Path, requiresSDK)
	}

	err = filepath.WalkDir(exampleDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, sparrowModules) && p != sdkModule && !strings.HasPrefix(p, sdkModule+"/") {
				t.Errorf("%s imports %s; a plugin may import the SDK only", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	list := exec.Command(goCmd, "list", "-deps", "-test", "./...")
	list.Dir = exampleDir
	list.Env = standalone()
	out, err = list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, sparrowModules) && pkg != sdkModule && !strings.HasPrefix(pkg, sdkModule+"/") {
			t.Errorf("the example depends on %s; plugins may depend on the SDK only", pkg)
		}
	}
}
