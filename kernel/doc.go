// Package kernel wires Sparrow's trusted core for one invocation: the
// merged configuration, the log file and the plugin host, with plugins
// found on disk, pinned by config and configured from their HCL blocks.
//
// It holds no global state; cmd/sparrow opens one Kernel per command and
// closes it on every exit path, which stops every plugin it started.
package kernel
