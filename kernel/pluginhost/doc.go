// Package pluginhost finds, verifies, launches and supervises plugin
// processes.
//
// Invariants:
//   - A manifest is read as data; no binary runs to learn what it is.
//   - The bytes hashed are the bytes executed: the entry file is copied into
//     a sealed memory file (or a private read-only copy), checked with
//     go-plugin's SecureConfig, and that copy is what execs.
//   - A plugin sees no host environment beyond the names its manifest
//     declares, and no stdin.
//   - Where confinement works (Linux, bubblewrap; probed once per Host), a
//     provider, tool or surface process reaches only what its kind and
//     manifest grant: no home, no workspace for providers, no network for
//     tools that do not declare it. Sandbox plugins are the execution
//     layer and are not confined.
//   - Each plugin starts at most once per Host, lazily, and starts of
//     different plugins run in parallel.
//   - A plugin that fails to start, hangs or crashes is reported by name
//     with its last stderr lines; the kernel keeps running.
//   - No plugin outlives the Host: Close kills every process group, the
//     kernel's death delivers SIGKILL (Linux parent-death signal), and the
//     SDK's serve loop exits when its parent goes away.
package pluginhost
