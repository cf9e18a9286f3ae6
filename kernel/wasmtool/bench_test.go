package wasmtool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadCold is a first load: an empty cache, so a full compile.
func BenchmarkLoadCold(b *testing.B) {
	wasm := guest(b, "tool")
	ctx := context.Background()
	for b.Loop() {
		r, err := New(ctx, Options{CacheDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Load(ctx, wasm, "tool", Grants{}); err != nil {
			b.Fatal(err)
		}
		_ = r.Close(ctx)
	}
}

// BenchmarkLoadCached is a load in a new process: a new Runtime whose
// cache directory already holds the compiled module.
func BenchmarkLoadCached(b *testing.B) {
	wasm := guest(b, "tool")
	ctx := context.Background()
	dir := b.TempDir()
	warm := newRuntime(b, Options{CacheDir: dir})
	if _, err := warm.Load(ctx, wasm, "tool", Grants{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := New(ctx, Options{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Load(ctx, wasm, "tool", Grants{}); err != nil {
			b.Fatal(err)
		}
		_ = r.Close(ctx)
	}
}

// BenchmarkCall is one call of a loaded module: instantiate, run, parse.
func BenchmarkCall(b *testing.B) {
	m := loadTool(b, Options{}, Grants{})
	ctx := context.Background()
	c := Call{Args: json.RawMessage(`{"mode":"env"}`)}
	for b.Loop() {
		if _, err := m.Call(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallWorkspace is one call that mounts a workspace and reads a
// file from it: the cost of the workspace file system on top of a call.
func BenchmarkCallWorkspace(b *testing.B) {
	m := loadTool(b, Options{}, Grants{})
	ctx := context.Background()
	ws := workspace(b, map[string]string{"f.txt": "x"})
	c := Call{Args: json.RawMessage(`{"mode":"echo","path":"f.txt"}`), Workspace: ws}
	for b.Loop() {
		if _, err := m.Call(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorkspaceOpen is the workspace file system alone: open and
// read a file two directories down, as a guest's open would.
func BenchmarkWorkspaceOpen(b *testing.B) {
	l := newLayout(b)
	if err := os.MkdirAll(filepath.Join(l.ws, "a/b"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.ws, "a/b/f.txt"), []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	w := openTestFS(b, l, false)
	for b.Loop() {
		if _, errno := readAll(w, "a/b/f.txt"); errno != 0 {
			b.Fatal(errno)
		}
	}
}

// BenchmarkHostOpen is the same read with os.ReadFile on the host path,
// what wazero's own directory mount costs, for comparison.
func BenchmarkHostOpen(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "a/b/f.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}
