// Package workspace is where Sparrow's file tools may look: it resolves a
// model's path argument inside the workspace and walks the workspace the
// way git shows it. The gRPC file tools (plugins/tools/fs) and the WASM
// search tools (plugins/tools/search) share it, so it builds for
// GOOS=wasip1 and imports nothing that pulls in gRPC.
//
// Invariants:
//   - Every path is workspace-relative; an absolute path is accepted only
//     when it lies inside the workspace. Paths are resolved with symlinks
//     followed and anything that ends up outside the workspace is refused,
//     whatever the kernel's gate already checked (defence in depth).
//   - Errors are worded for the model, which named the path.
//   - Walks skip .git and what .gitignore files and .git/info/exclude
//     ignore, with git's rules; symlinks are listed, never followed.
package workspace
