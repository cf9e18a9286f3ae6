// Package vercel is the Vercel Sandbox backend: commands run in a Vercel
// Sandbox, a remote Firecracker microVM, through the vendor's own `sandbox`
// CLI (npm package `sandbox`). A sandbox is created with `sandbox create`,
// files travel with `sandbox copy` as tar archives, and commands run with
// `sandbox exec`, which streams their output.
//
// It never reports success it did not see: a missing or logged-out CLI, a
// limit it cannot enforce, or an exit status that never arrived is exit 127
// with the reason on stderr. README.md lists what it cannot do.
package vercel
