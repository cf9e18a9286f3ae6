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
//     [tool] (Call.Tool, else the module's name; the request's "tool"
//     field too), the request on stdin, the workspace (if any) as the
//     only preopened directory at /workspace, read-only unless the call
//     is Writable, no sockets.
//   - The workspace is a sys.FS on os.Root (workspace.go) that resolves
//     every path itself, one element at a time, holding each directory
//     open. No path leaves the workspace: ".." above it, an absolute
//     symbolic link, or a relative one whose target (joined onto the
//     canonical directory holding the link) climbs above it is EPERM; at
//     most 40 links per path (ELOOP). os.Root enforces the same bound
//     independently.
//   - Hidden paths (Call.Hide) do not exist for the guest: every element
//     on the way to a path, link names and link targets included, is
//     checked as a canonical workspace-relative path; a hidden one is
//     ENOENT, or EPERM when the call would create it (open O_CREAT,
//     mkdir, symlink, rename or link destination). Listings omit hidden
//     entries; a symbolic link may not be created to a hidden path, and
//     a directory may not be renamed if that would bring a hidden path
//     into view. A visible link to a hidden path is listed and can be
//     lstat'ed and readlink'ed, not followed.
//   - A symbolic link swapped in during a call cannot defeat the checks:
//     a directory is entered and a file used only if it is the one lstat
//     saw (same device and inode); O_CREAT creates with O_EXCL, O_TRUNC
//     truncates after the check, and every change is made by name inside
//     a checked directory, so no link is followed that was not checked.
//   - A read-only workspace refuses every change with EROFS (EISDIR for
//     a directory opened for writing; EBADF for writes on an open file,
//     as wazero's ReadFS). FIFOs, devices and sockets cannot be opened
//     (ENOTSUP): they could block the host thread past the time limit.
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
