// Package pluginpkg is the publisher's side of plugin distribution: it
// turns a plugin's build directory into a release in a mirror (one
// archive per platform, the release manifest, SHA256SUMS and the indexes
// of docs/plugin-distribution.md) and signs releases.
//
// Invariants:
//   - The same inputs give byte-identical archives and manifests: entries
//     sorted, fixed times, owners and modes (the entry 0755, the rest 0644).
//   - A published version never changes silently: packaging one that is
//     already in the mirror with other content is refused unless forced.
//   - Nothing half-written is ever visible: a version directory appears
//     (or is replaced) by one rename, indexes are written temp + rename.
//   - Only what was checked is signed: Sign verifies every archive against
//     the manifest and SHA256SUMS before it writes a signature.
package pluginpkg
