// Package wasm is the guest side of Sparrow's WASM tools: a Go tool built
// with GOOS=wasip1 GOARCH=wasm calls Run with one function, or RunTools
// with one function per tool when a module serves several, and is done.
//
// The ABI (docs/wasm-tools.md) is WASI preview 1: the request is one JSON
// object on stdin naming the tool, the result one JSON object on stdout,
// logs go to stderr, and exit code 0 means the result on stdout is valid.
// The JSON types, Handle and HandleTools build on every platform so they
// can be tested anywhere; Run and RunTools exist only for GOOS=wasip1.
//
// This package never depends on a WASM runtime (the host is in the
// kernel) nor on gRPC: a WASM tool links only what it uses.
package wasm
