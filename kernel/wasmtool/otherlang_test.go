package wasmtool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtherLanguages runs guests that are not Go: the ABI is plain WASI
// preview 1, so nothing about it may depend on Go's wasip1 port (which
// always imports clock and random, and exits through proc_exit). A
// module written byte by byte always runs; a Rust guest runs too when the
// machine has rustc's wasm32-wasip1 target.
func TestOtherLanguages(t *testing.T) {
	r := newRuntime(t, Options{})
	ctx := context.Background()
	guests := map[string][]byte{"handwritten": handwrittenModule(`{"output":"hello from a module with one import"}`)}
	if wasm, why := buildRust(t); wasm != nil {
		guests["rust"] = wasm
	} else {
		t.Logf("rust guest not built: %s", why)
	}
	want := map[string]string{
		"handwritten": "hello from a module with one import",
		"rust":        "hello from rust, tool greet, ",
	}
	for name, wasm := range guests {
		t.Run(name, func(t *testing.T) {
			m, err := r.Load(ctx, wasm, name, Grants{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.Call(ctx, Call{Tool: "greet", Args: []byte(`{"who":"Jack"}`), Workspace: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Output, want[name]) || res.Error != "" {
				t.Errorf("result %+v, want output starting %q", res, want[name])
			}
		})
	}
}

// buildRust compiles testdata/rust with rustc for wasm32-wasip1, or says
// why it cannot.
func buildRust(t *testing.T) ([]byte, string) {
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		return nil, "no rustc on PATH"
	}
	out := filepath.Join(t.TempDir(), "rust.wasm")
	cmd := exec.Command(rustc, "--edition", "2021", "-O", "--target", "wasm32-wasip1", "-o", out, filepath.Join("testdata", "rust", "main.rs"))
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "target may not be installed") || strings.Contains(string(b), "can't find crate for `std`") {
			return nil, "rustc has no wasm32-wasip1 target (rustup target add wasm32-wasip1)"
		}
		t.Fatalf("rustc: %v\n%s", err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm, ""
}

// handwrittenModule assembles, byte by byte, the smallest module the ABI
// accepts: it imports only wasi_snapshot_preview1.fd_write, exports its
// memory and _start, and _start writes result to stdout and returns
// (exit 0) without reading its request.
func handwrittenModule(result string) []byte {
	section := func(id byte, body ...[]byte) []byte {
		b := concat(body...)
		return concat([]byte{id}, uleb(len(b)), b)
	}
	name := func(s string) []byte { return concat(uleb(len(s)), []byte(s)) }
	// Memory at 0: the iovec {buf 16, len n}, nwritten at 8, text at 16.
	data := concat([]byte{16, 0, 0, 0}, le32(len(result)), make([]byte, 8), []byte(result))
	code := []byte{
		0x00,       // no locals
		0x41, 0x01, // i32.const 1: stdout
		0x41, 0x00, // i32.const 0: the iovec
		0x41, 0x01, // i32.const 1: one iovec
		0x41, 0x08, // i32.const 8: where nwritten goes
		0x10, 0x00, // call fd_write
		0x1a, // drop the errno
		0x0b, // end
	}
	return concat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		section(1, uleb(2), // types: fd_write's, then _start's
			[]byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f},
			[]byte{0x60, 0, 0}),
		section(2, uleb(1), name("wasi_snapshot_preview1"), name("fd_write"), []byte{0x00, 0}),
		section(3, uleb(1), []byte{1}),       // _start has type 1
		section(5, uleb(1), []byte{0x00, 1}), // one memory, one page
		section(7, uleb(2), name("memory"), []byte{0x02, 0}, name("_start"), []byte{0x00, 1}),
		section(10, uleb(1), uleb(len(code)), code),
		section(11, uleb(1), []byte{0x00, 0x41, 0x00, 0x0b}, uleb(len(data)), data),
	)
}

func concat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func uleb(n int) []byte {
	var b []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func le32(n int) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)} }

// BenchmarkCallHandwritten is the ABI's floor: a call of a module with no
// language runtime to start.
func BenchmarkCallHandwritten(b *testing.B) {
	r := newRuntime(b, Options{})
	m, err := r.Load(context.Background(), handwrittenModule(`{"output":"ok"}`), "floor", Grants{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Call(context.Background(), Call{Args: []byte(`{}`)}); err != nil {
			b.Fatal(err)
		}
	}
}
