package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

var (
	probeBuild sync.Once
	probeWASM  []byte
	probeErr   error
	// wasmDir holds the probe module and the compilation cache every
	// test shares (compiling under -race takes many seconds); TestMain
	// removes it.
	wasmDir string
)

// probeModule is kernel/wasmtool's test guest, built once: a tool whose
// "mode" argument picks a behaviour.
func probeModule(t *testing.T) []byte {
	t.Helper()
	probeBuild.Do(func() {
		if wasmDir, probeErr = os.MkdirTemp("", "sparrow-pluginhost-wasm-"); probeErr != nil {
			return
		}
		out := filepath.Join(wasmDir, "probe.wasm")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = filepath.Join("..", "wasmtool", "testdata", "tool")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			probeErr = errors.New(err.Error() + "\n" + string(b))
			return
		}
		probeWASM, probeErr = os.ReadFile(out)
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probeWASM
}

const probeManifest = `plugin "probe" {
  kind       = "tool"
  version    = "1.0.0"
  sdk        = ">= 0.1.0, < 0.2.0"
  runtime    = "wasm"
  entry      = "probe.wasm"
  components = ["peek", "poke"]
  tool "peek" {
    risk         = "read-only"
    description  = "reads"
    input_schema = { type = "object", properties = { mode = {}, path = {}, text = {}, ops = {} } }
    timeout      = "5s"
  }
  tool "poke" {
    risk         = "mutating"
    description  = "writes"
    input_schema = { type = "object", properties = { mode = {}, path = {}, text = {}, ops = {} } }
  }
}
`

// wasmHost starts a Host with the probe module as plugin "probe".
func wasmHost(t *testing.T, pin string, hide func(string) bool) (*pluginhost.Host, *pluginhost.Plugin, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe.wasm"), probeModule(t), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, pluginhost.ManifestFile)
	if err := os.WriteFile(path, []byte(probeManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := pluginhost.ReadManifest(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	h, err := pluginhost.New(pluginhost.Options{CacheDir: filepath.Join(wasmDir, "cache"), HidePath: hide},
		[]pluginhost.Spec{{Manifest: m, SHA256: pin, PinnedBy: "the test's lock"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	p, err := h.Start(context.Background(), "probe")
	return h, p, err
}

func wasmTool(t *testing.T, p *pluginhost.Plugin, name string) tool.Tool {
	t.Helper()
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestWASMPluginTools(t *testing.T) {
	_, p, err := wasmHost(t, "", func(rel string) bool { return strings.HasSuffix(rel, ".env") })
	if err != nil {
		t.Fatal(err)
	}
	if p.PID() != 0 || p.Exited() || p.Ping(context.Background()) != nil {
		t.Errorf("a WASM plugin has no process: pid %d exited %t", p.PID(), p.Exited())
	}
	if p.Info.Kind != plugin.KindTool || len(p.Info.Components) != 2 {
		t.Errorf("info %+v", p.Info)
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("ahoy"), 0o644)
	os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=hunter2"), 0o644)
	call := func(name, args string) (tool.Result, error) {
		return wasmTool(t, p, name).Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(args), Workspace: ws})
	}

	// The request carries the tool's own name, for one module serving many.
	res, err := call("peek", `{"mode":"env"}`)
	if err != nil || res.Content != "peek" {
		t.Errorf("peek env = %q, %v; want argv [peek] and no environment", res.Content, err)
	}
	// A read-only tool gets a read-only workspace, a mutating one can write.
	res, err = call("peek", `{"mode":"write","path":"b.txt","text":"x"}`)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "Read-only file system") {
		t.Errorf("peek write = %+v, %v; want the tool's own read-only error", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Error("a read-only tool wrote b.txt")
	}
	res, err = call("poke", `{"mode":"write","path":"b.txt","text":"x"}`)
	if err != nil || res.IsError {
		t.Fatalf("poke write = %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(b) != "x" {
		t.Errorf("b.txt = %q", b)
	}
	// Hidden paths are not there.
	res, _ = call("peek", `{"mode":"fs","ops":[{"op":"list","path":"."},{"op":"read","path":".env"}]}`)
	if strings.Contains(res.Content, ".env") || !strings.HasSuffix(res.Content, "ENOENT") {
		t.Errorf("hidden .env: %q", res.Content)
	}
	// A breach is an error naming the plugin and the tool.
	_, err = call("peek", `{"mode":"exit3"}`)
	if err == nil || !strings.HasPrefix(err.Error(), "plugin probe: tool peek: exit 3: something broke") {
		t.Errorf("exit3 error = %v", err)
	}
	// Cancelled by the caller: the context's error, as for gRPC tools.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := wasmTool(t, p, "peek").Invoke(ctx, &tool.Call{Arguments: json.RawMessage(`{"mode":"loop"}`), Workspace: ws}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
}

func TestWASMPluginConfigureOnlyTightens(t *testing.T) {
	_, p, err := wasmHost(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := p.Schema(context.Background(), "peek")
	if err != nil || len(schema.Attributes) != 3 {
		t.Fatalf("schema %+v, %v", schema, err)
	}
	for _, tc := range []struct{ values, want string }{
		{`{"timeout":"1m"}`, "timeout 1m0s is above the tool's 5s"},
		{`{"memory":"2GiB"}`, "memory 2GiB is above the tool's 268435456 bytes"},
		{`{"max_output":"lots"}`, `max_output "lots": want a size`},
		{`{"timeout":"1s","memory":"16MiB","max_output":"1KiB"}`, ""},
	} {
		err := p.Configure(context.Background(), "peek", plugin.Config{Values: json.RawMessage(tc.values)})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("configure %s: %v, want %q", tc.values, err, tc.want)
		}
	}
	// The tightened limits apply.
	_, err = wasmTool(t, p, "peek").Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(`{"mode":"loop"}`), Workspace: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exceeded its 1s time limit") {
		t.Errorf("loop after timeout=1s: %v", err)
	}
	_, err = wasmTool(t, p, "peek").Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(`{"mode":"bigout"}`), Workspace: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "output exceeds 1024 bytes") {
		t.Errorf("bigout after max_output=1KiB: %v", err)
	}
}

func TestWASMPluginHashPin(t *testing.T) {
	_, _, err := wasmHost(t, strings.Repeat("0", 64), nil)
	var mismatch *pluginhost.HashMismatchError
	if !errors.As(err, &mismatch) || !strings.Contains(err.Error(), "but the test's lock pins 0000") {
		t.Fatalf("start with a wrong pin: %v", err)
	}
	var pe *pluginhost.Error
	if !errors.As(err, &pe) || pe.Plugin != "probe" {
		t.Errorf("error does not name the plugin: %v", err)
	}
}

// badCodeModule has the interface the ABI wants (memory and _start
// exported, no imports) but a _start that does not validate: it leaves an
// i32 on the stack of a function that returns nothing.
var badCodeModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // types: () -> ()
	0x03, 0x02, 0x01, 0x00, // one function of type 0
	0x05, 0x03, 0x01, 0x00, 0x01, // one memory of one page
	0x07, 0x13, 0x02, // two exports
	0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00,
	0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00,
	0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x01, 0x0b, // i32.const 1; end
}

// A WASM plugin is compiled at its first call, not at start: a module
// whose interface is right starts (a run that never calls it never pays
// the compile), and a compile failure is the call's error, naming the
// plugin, the same on every call; Ping (doctor, plugin list --check)
// compiles and reports it too.
func TestWASMPluginCompilesAtFirstCall(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "probe.wasm"), badCodeModule, 0o644)
	path := filepath.Join(dir, pluginhost.ManifestFile)
	os.WriteFile(path, []byte(probeManifest), 0o644)
	m, diags := pluginhost.ReadManifest(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cache := t.TempDir()
	h, err := pluginhost.New(pluginhost.Options{CacheDir: cache}, []pluginhost.Spec{{Manifest: m}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p, err := h.Start(context.Background(), "probe")
	if err != nil {
		t.Fatalf("start compiled the module: %v", err)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("start touched the compilation cache: %v", ents)
	}
	for range 2 {
		_, err := wasmTool(t, p, "peek").Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(`{}`), Workspace: t.TempDir()})
		if err == nil || !strings.HasPrefix(err.Error(), "plugin probe: load wasm tool probe: compile:") {
			t.Fatalf("call error = %v", err)
		}
	}
	if err := p.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "plugin probe: load wasm tool probe: compile:") {
		t.Errorf("ping = %v", err)
	}
}
