package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// wasmGuests are the test guests of kernel/wasmtool built once per test
// process, by name.
var wasmGuests = struct {
	sync.Mutex
	dir   string
	built map[string]error
}{built: map[string]error{}}

// buildWASMGuest builds kernel/wasmtool/testdata/NAME (a Go program) as a
// WASI module and copies it to FILE: the misbehaving guests drive the
// bad-input tests through the whole CLI.
//
//	wasmguest NAME FILE
func buildWASMGuest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: wasmguest NAME FILE")
	}
	name := args[0]
	wasmGuests.Lock()
	if wasmGuests.dir == "" {
		dir, err := os.MkdirTemp("", "sparrow-test-wasm-")
		ts.Check(err)
		wasmGuests.dir = dir
	}
	out := filepath.Join(wasmGuests.dir, name+".wasm")
	err, done := wasmGuests.built[name]
	if !done {
		src, _ := filepath.Abs(filepath.Join("..", "..", "kernel", "wasmtool", "testdata", name))
		cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, berr := cmd.CombinedOutput(); berr != nil {
			err = &buildError{out: string(b), err: berr}
		}
		wasmGuests.built[name] = err
	}
	wasmGuests.Unlock()
	if err != nil {
		ts.Fatalf("build wasm guest %s: %v", name, err)
	}
	b, err := os.ReadFile(out)
	ts.Check(err)
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	ts.Check(os.WriteFile(dst, b, 0o644))
}
