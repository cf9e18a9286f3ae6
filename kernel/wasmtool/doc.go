// Package wasmtool runs WASM tools: WASI preview 1 command modules under
// wazero with no ambient authority. Its one job is to turn module bytes
// into a checked, compiled Module and a call into a Result or a clear error.
//
// Invariants:
//   - A module is validated when it loads, before any call: it must be
//     WebAssembly, export _start and its memory, and import only WASI
//     preview 1 functions other than sock_*. Anything else fails Load with
//     an error naming the module and the import.
//   - Every call gets a fresh instance: no environment variables, args =
//     [name], the request on stdin, the workspace (if any) as the only
//     preopened directory at /workspace, read-only unless the call is
//     Writable, no sockets.
//   - The clock and randomness are real only when granted; otherwise the
//     guest sees wazero's deterministic fakes.
//   - Memory, wall time and output are capped per call; a trap, a non-zero
//     exit, a breached limit or a bad result is a *CallError, never a panic
//     and never unbounded memory on the host.
//   - Compiled code is cached on disk under Options.CacheDir in a directory
//     named by the cache format and the wazero version, so an upgrade of
//     either starts a fresh cache.
//
// The ABI is documented in docs/wasm-tools.md; sdk/wasm is the guest side.
package wasmtool
