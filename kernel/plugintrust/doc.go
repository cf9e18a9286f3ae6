// Package plugintrust holds the formats that carry trust from a plugin's
// publisher to a user: ed25519 keys and detached signatures, the signed
// release manifest and SHA256SUMS (docs/plugin-distribution.md).
//
// Invariant: trust comes only from the verifier's own list of keys; a key
// named inside a signature file only says who signed.
package plugintrust
