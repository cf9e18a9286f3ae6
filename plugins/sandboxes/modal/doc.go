// Package modal is the Modal sandbox backend: commands run in a Modal
// Sandbox, a remote container, through the vendor's own tools. A sandbox is
// created with the Python SDK (Modal has no CLI verb for it), commands run
// with `modal container exec --no-pty`, and the workspace is copied up
// before the first command and back after each one.
//
// It never reports success it did not see: a missing or unauthenticated
// CLI, a limit it cannot enforce, or an exit status that never arrived is
// exit 127 with the reason on stderr. README.md lists what it cannot do.
package modal
