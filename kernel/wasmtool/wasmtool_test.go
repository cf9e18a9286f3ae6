package wasmtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testDir holds the guest builds and the shared compilation cache for this
// test binary, so each guest is built and compiled once.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmtool-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// guest returns the bytes of testdata/NAME built for wasip1. All guests
// are built on first use.
func guest(t testing.TB, name string) []byte {
	t.Helper()
	buildOnce.Do(func() {
		if _, err := exec.LookPath("go"); err != nil {
			buildErr = err
			return
		}
		for _, g := range []string{"tool", "socket", "hostimport"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(testDir, g+".wasm"), "./testdata/"+g)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("build %s: %v\n%s", g, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		if errors.Is(buildErr, exec.ErrNotFound) {
			t.Skip("needs the go command to build guests")
		}
		t.Fatal(buildErr)
	}
	b, err := os.ReadFile(filepath.Join(testDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newRuntime returns a Runtime on the shared cache, closed with the test.
func newRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(testDir, "cache")
	}
	r, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r
}

// loadTool loads testdata/tool under the name "tool".
func loadTool(t testing.TB, opts Options, grants Grants) *Module {
	t.Helper()
	m, err := newRuntime(t, opts).Load(context.Background(), guest(t, "tool"), "tool", grants)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// workspace returns a workspace directory holding files, inside a parent
// that holds outside.txt.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	parent := t.TempDir()
	if err := os.WriteFile(filepath.Join(parent, "outside.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func TestCallEcho(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	ws := workspace(t, map[string]string{"hello.txt": "hi there"})
	args := `{"mode":"echo","path":"hello.txt"}`
	res, err := m.Call(context.Background(), Call{Args: json.RawMessage(args), Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if want := "args=" + args + " file=hi there"; res.Output != want || res.Error != "" {
		t.Errorf("result = %+v, want output %q", res, want)
	}
}

func TestCallNoAmbientAuthority(t *testing.T) {
	t.Setenv("SPARROW_SECRET", "leak")
	m := loadTool(t, Options{}, Grants{})
	res, err := m.Call(context.Background(), Call{Args: json.RawMessage(`{"mode":"env"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "tool" {
		t.Errorf("argv and environment = %q, want just the tool name", res.Output)
	}
	// No workspace: no directory at all.
	res, err = m.Call(context.Background(), Call{Args: json.RawMessage(`{"mode":"read","path":"/workspace"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == "" {
		t.Errorf("reading /workspace without a workspace succeeded: %+v", res)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("#!/bin/sh\necho hi\n"), "load wasm tool bad: not a WebAssembly module: missing the \\0asm header"},
		{"empty", nil, "not a WebAssembly module"},
		{"wrong version", []byte("\x00asm\x02\x00\x00\x00"), "not a WebAssembly module: unsupported binary version"},
		{"truncated section", append(wasmHeader(), 7, 50, 1), "not a WebAssembly module: unexpected end of data"},
		{"no _start", module(typeSec, funcSec, memSec, exportSec(export("run", 0, 0), export("memory", 2, 0)), codeSec(0x0b)),
			"load wasm tool bad: does not export a _start function"},
		{"no memory", module(typeSec, funcSec, memSec, exportSec(export("_start", 0, 0)), codeSec(0x0b)),
			`load wasm tool bad: does not export its memory as "memory"`},
		{"imported memory", module(importSec("env", "memory", 2, 0, 1)),
			"load wasm tool bad: imports the memory env.memory; a WASM tool may import only WASI functions"},
		{"unknown wasi function", module(typeSec, importSec(wasiModule, "proc_spawn", 0, 0)),
			"imports wasi_snapshot_preview1.proc_spawn, which is not a WASI preview 1 function"},
		{"socket", guest(t, "socket"),
			"load wasm tool bad: imports wasi_snapshot_preview1.sock_accept, which no WASM tool may use"},
		{"host function", guest(t, "hostimport"),
			"load wasm tool bad: imports env.open_socket, which is not a WASI preview 1 function; a WASM tool may import only wasi_snapshot_preview1"},
	}
	r := newRuntime(t, Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := r.Load(context.Background(), tc.wasm, "bad", Grants{Clock: true, Random: true})
			if err == nil {
				_ = m.Close(context.Background())
				t.Fatal("Load succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCallFailures(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	tests := []struct {
		name string
		call Call
		kind ErrorKind
		want string
	}{
		{"infinite loop", Call{Args: mode("loop"), Timeout: time.Second}, KindTimeout, "tool tool: exceeded its 1s time limit"},
		{"memory bomb", Call{Args: mode("membomb"), MaxMemoryPages: 1024}, KindMemory, "tool tool: exceeded its memory limit of 1024 pages (64 MiB)"},
		{"huge stdout", Call{Args: mode("bigout"), MaxOutputBytes: 64 << 10}, KindOutput, "tool tool: output exceeds 65536 bytes"},
		{"invalid JSON", Call{Args: mode("badjson")}, KindBadResult, "tool tool: wrote invalid JSON: unexpected EOF"},
		{"exit code", Call{Args: mode("exit3")}, KindExit, "tool tool: exit 3: something broke"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, err := m.Call(context.Background(), tc.call)
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("Call = %+v, %v; want a *CallError", res, err)
			}
			if ce.Kind != tc.kind || err.Error() != tc.want {
				t.Errorf("error = %v (%v)\nwant    %s (%v)", err, ce.Kind, tc.want, tc.kind)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("call took %s", d)
			}
		})
	}
}

func TestCallTrap(t *testing.T) {
	r := newRuntime(t, Options{})
	const unreachable = 0x00
	m, err := r.Load(context.Background(), module(typeSec, funcSec, memSec,
		exportSec(export("_start", 0, 0), export("memory", 2, 0)), codeSec(unreachable, 0x0b)), "trap", Grants{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Call(context.Background(), Call{})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.HasPrefix(err.Error(), "tool trap: trapped: ") {
		t.Fatalf("error = %v, want a trap", err)
	}
}

func TestCallCancelled(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := m.Call(ctx, Call{Args: mode("loop"), Timeout: time.Minute})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindCanceled {
		t.Fatalf("error = %v, want a cancelled call", err)
	}
}

func TestCallStaysInWorkspace(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	ws := workspace(t, nil)
	outside := filepath.Join(filepath.Dir(ws), "outside.txt")
	tests := []struct {
		name string
		args string
	}{
		{"absolute host path", fmt.Sprintf(`{"mode":"read","path":%q}`, outside)},
		{"system file", `{"mode":"read","path":"/etc/passwd"}`},
		{"dot-dot from workspace", `{"mode":"read","path":"/workspace/../outside.txt"}`},
		{"raw dot-dot on the preopen", `{"mode":"rawdotdot","path":"../outside.txt"}`},
		{"raw nested dot-dot", `{"mode":"rawdotdot","path":"a/../../outside.txt"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := m.Call(context.Background(), Call{Args: json.RawMessage(tc.args), Workspace: ws, Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Error == "" || strings.Contains(res.Output, "secret") {
				t.Errorf("result = %+v, want the tool to report an error", res)
			}
			t.Logf("tool error: %s", res.Error)
		})
	}
}

func TestCallWritable(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	ws := workspace(t, nil)
	args := json.RawMessage(`{"mode":"write","path":"new.txt","text":"written"}`)

	res, err := m.Call(context.Background(), Call{Args: args, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == "" {
		t.Errorf("write to a read-only workspace: %+v, want an error", res)
	}
	t.Logf("read-only write: %s", res.Error)
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only call created the file: %v", err)
	}

	res, err = m.Call(context.Background(), Call{Args: args, Workspace: ws, Writable: true})
	if err != nil || res.Error != "" {
		t.Fatalf("writable call = %+v, %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
}

func TestGrants(t *testing.T) {
	call := func(m *Module) (nanos int64, random string) {
		t.Helper()
		res, err := m.Call(context.Background(), Call{Args: mode("clock")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscan(res.Output, &nanos, &random); err != nil {
			t.Fatalf("output %q: %v", res.Output, err)
		}
		return nanos, random
	}

	fake := loadTool(t, Options{}, Grants{})
	t1, r1 := call(fake)
	t2, r2 := call(fake)
	if r1 != r2 {
		t.Errorf("ungranted randomness differs between calls: %s, %s", r1, r2)
	}
	if time.Since(time.Unix(0, t1)) < 24*time.Hour || time.Since(time.Unix(0, t2)) < 24*time.Hour {
		t.Errorf("ungranted clock reads the real time: %s", time.Unix(0, t1))
	}

	real := loadTool(t, Options{}, Grants{Clock: true, Random: true})
	t1, r1 = call(real)
	_, r2 = call(real)
	if r1 == r2 {
		t.Errorf("granted randomness repeats: %s", r1)
	}
	if d := time.Since(time.Unix(0, t1)); d < 0 || d > time.Minute {
		t.Errorf("granted clock is off by %s", d)
	}
}

func TestCallBadRequests(t *testing.T) {
	m := loadTool(t, Options{MaxMemoryPages: 2048}, Grants{})
	tests := []struct {
		name string
		call Call
		want string
	}{
		{"args not JSON", Call{Args: json.RawMessage(`{mode`)}, "tool tool: arguments are not valid JSON"},
		{"missing workspace", Call{Workspace: filepath.Join(t.TempDir(), "nope")}, "tool tool: workspace: "},
		{"memory above ceiling", Call{MaxMemoryPages: 4096}, "tool tool: MaxMemoryPages 4096 is above the runtime's MaxMemoryPages 2048"},
		{"memory below module minimum", Call{MaxMemoryPages: 1}, "tool tool: needs "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Call(context.Background(), tc.call)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestCallConcurrent(t *testing.T) {
	m := loadTool(t, Options{}, Grants{})
	ws := workspace(t, map[string]string{"f": "x"})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			res, err := m.Call(context.Background(), Call{Args: json.RawMessage(`{"mode":"echo","path":"f"}`), Workspace: ws})
			if err == nil && !strings.HasSuffix(res.Output, "file=x") {
				err = fmt.Errorf("output %q", res.Output)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestCacheOnDisk(t *testing.T) {
	dir := t.TempDir()
	r := newRuntime(t, Options{CacheDir: dir})
	if _, err := r.Load(context.Background(), guest(t, "tool"), "tool", Grants{}); err != nil {
		t.Fatal(err)
	}
	path := CachePath(dir)
	if !strings.Contains(path, filepath.Join("v"+CacheVersion, "wazero-")) {
		t.Errorf("cache path %s is not keyed by versions", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil || len(entries) == 0 {
		t.Errorf("cache %s is empty: %v", path, err)
	}
	if _, err := New(context.Background(), Options{MaxMemoryPages: 70000}); err == nil {
		t.Error("New accepted MaxMemoryPages 70000")
	}
}

func mode(m string) json.RawMessage { return json.RawMessage(`{"mode":"` + m + `"}`) }

// Handmade modules for what a Go build cannot produce.

func wasmHeader() []byte { return append([]byte(nil), wasmMagic...) }

func module(sections ...[]byte) []byte {
	b := wasmHeader()
	for _, s := range sections {
		b = append(b, s...)
	}
	return b
}

func section(id byte, payload ...byte) []byte {
	return append([]byte{id, byte(len(payload))}, payload...)
}

var (
	typeSec = section(1, 1, 0x60, 0, 0) // one type: func() -> ()
	funcSec = section(3, 1, 0)          // one function of type 0
	memSec  = section(5, 1, 0, 1)       // one memory, min 1 page
)

func export(name string, kind, index byte) []byte {
	return append(append([]byte{byte(len(name))}, name...), kind, index)
}

func exportSec(exports ...[]byte) []byte {
	p := []byte{byte(len(exports))}
	for _, e := range exports {
		p = append(p, e...)
	}
	return section(7, p...)
}

func importSec(mod, name string, desc ...byte) []byte {
	p := append([]byte{1, byte(len(mod))}, mod...)
	p = append(append(p, byte(len(name))), name...)
	return section(2, append(p, desc...)...)
}

// codeSec is the body of the one function: no locals, then instructions.
func codeSec(instrs ...byte) []byte {
	body := append([]byte{0}, instrs...)
	return section(10, append([]byte{1, byte(len(body))}, body...)...)
}
