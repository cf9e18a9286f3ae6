// Package config loads Sparrow's HCL configuration.
//
// Its one job is to turn the five configuration layers — built-in defaults,
// the user file, the project file, SPARROW_* environment variables and
// command-line overrides — into one typed, validated [Config] that records
// where every value came from.
//
// Invariants:
//
//   - Every problem is a diagnostic ([hcl.Diagnostics]) that names
//     file:line:column where it has a source position, and every problem
//     in every file is reported in one pass, not only the first.
//   - A project file may narrow trust but never widen it: unless the
//     project directory is listed in the user file's trusted_projects,
//     settings that would widen what Sparrow may do are ignored with a
//     warning diagnostic pointing at them.
//   - The default denied paths (.git, .env, .env.local, .ssh, id_rsa,
//     id_ed25519) are always part of the effective configuration.
//   - budget.max_turns never exceeds [MaxTurnsCap].
//   - Library code never reads the process environment itself: callers
//     inject a getenv function, which also backs the env("NAME") HCL
//     function.
//   - Secrets are never printed: [Config.Show] masks sensitive attributes.
//   - The package holds no mutable package-level state.
//
// Plugin-specific attributes of provider, sandbox, tool and surface blocks
// are kept as raw [hcl.Body] values, one per layer, and decoded later with
// [DecodeComponent] against the schema the plugin declares.
package config
