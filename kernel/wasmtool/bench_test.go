package wasmtool

import (
	"context"
	"encoding/json"
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
