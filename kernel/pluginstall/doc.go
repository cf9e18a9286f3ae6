// Package pluginstall installs signed plugin releases from mirrors into
// the data directory and keeps the lock file in step
// (docs/plugin-distribution.md): Source → resolve → verify → unpack → lock.
//
// Invariants:
//   - Nothing from a mirror is trusted until checked: the index only
//     helps choose a version; the manifest and SHA256SUMS must both be
//     signed by one trusted key, and every byte installed is hashed
//     against them.
//   - An install, upgrade or removal either completes or leaves
//     <DataDir>/plugins and the lock file byte-for-byte as they were.
//     Work happens in a temporary directory inside <DataDir>/plugins (so
//     a rename publishes it); the lock file is written (temp + rename)
//     after the plugin directory is in place and before any older
//     version is removed, so the lock never names a missing directory.
//   - Unpacking admits regular files and directories only, inside the
//     target, within fixed caps on entries and bytes.
//   - Operations that change <DataDir>/plugins or the lock file hold an
//     exclusive flock on <DataDir>/plugins/.lock.
//   - A plugin's signer never changes silently: a release signed by a key
//     other than the one in the lock file needs Options.AcceptNewKey.
package pluginstall
