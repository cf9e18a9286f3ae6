// Package redact hides secrets in text and JSON before they reach an event,
// a transcript, a log or a model.
//
// Its one job is [Redactor]: built once per run from the literal secrets the
// kernel knows (sensitive config values, API keys) and the process
// environment, it replaces each literal secret with "[REDACTED]" and each
// recognised credential shape (provider API keys, cloud access keys, bearer
// tokens, JWTs, PEM private keys, passwords in URLs and assignments) with
// "[REDACTED:<kind>]".
//
// Invariants:
//
//   - A Redactor is immutable after [New] and safe for concurrent use; the
//     package holds no mutable state (its pattern table is a constant).
//   - Redaction only ever removes information: the output never contains a
//     literal secret or a matched credential, and redacting twice gives the
//     same result as redacting once.
//   - Ordinary text survives: git SHAs, UUIDs, hashes, identifiers and code
//     that merely mentions a password are left alone. Patterns that could
//     match prose carry a plausibility check, and every pattern is guarded
//     by literal anchors found, with the literal secrets, in one pass over
//     the text, so clean text costs that pass and an expression run only
//     where a key is assigned a plausible value.
//   - Literal secrets whose occurrences overlap are replaced as one
//     stretch, so no part of either is left.
//   - [Redactor.JSON] rewrites string values only; structure, key order,
//     numbers and object keys are preserved byte for byte.
package redact
