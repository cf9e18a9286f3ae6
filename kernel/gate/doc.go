// Package gate decides every tool call: permissions first, then the
// autonomy dial. It is pure logic; its only I/O is resolving paths
// (lstat, readlink, EvalSymlinks) against the workspace.
//
// Order of a decision (Gate.Decide), first match wins:
//  1. Mode emergency-stop: deny everything, as a hard stop.
//  2. Shell analysis: a call with a command line gets the risk of what it
//     runs (AnalyzeShell); a line that does not parse is destructive and
//     is never allowed without a person (at most ask).
//  3. Paths: every path argument and the workdir must resolve, symlinks
//     followed, inside the workspace. A write (mutating or destructive)
//     outside is a hard stop; a read or exec outside is denied. Default
//     denied paths (.git .env .env.local .ssh id_rsa id_ed25519) and
//     configured ones are denied in any path component, in path arguments
//     and in the words of a command line.
//  4. Mode read-only or plan: deny anything but read-only risk.
//  5. Rules: deny rules, then ask rules, then allow rules, each in
//     definition order.
//  6. The dial: Table(band of min(dial, mode ceiling), risk).
//
// Invariants: deny beats ask beats allow; no rule and no dial level lets
// a call escape the workspace, touch a denied path, or run in
// emergency-stop, read-only or plan mode unless it is read-only; an
// unparsable command is never allowed without a person; every Verdict
// names the Rule that decided and gives a Reason.
//
// Stateful hard stops (max turns, budget, repeated failures, stuck loops,
// sandbox escape) live in Tracker: the engine asks Tracker.Check before
// Gate.Decide, and Decide only when Check allows.
package gate
