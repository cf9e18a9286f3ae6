// Package gate decides every tool call: permissions first, then the
// autonomy dial.
//
// Order of a decision (Gate.Decide):
//  1. Paths: every path argument (and a command's workdir) must resolve,
//     symlinks followed, inside the workspace; default and configured
//     denied paths (.git, .env, .ssh, id_rsa, …) are refused wherever they
//     appear, in path arguments and in the words of a shell command.
//  2. Mode: emergency-stop refuses everything; read-only and plan refuse
//     anything but read-only risk.
//  3. Rules: deny rules win over ask rules, which win over allow rules.
//  4. The dial: (effective autonomy × risk) → allow, ask or deny.
//
// A shell command's risk is judged from what it runs (AnalyzeShell), not
// from the tool's declared risk. Stateful hard stops (max turns, budget,
// repeated failures, stuck loops) live in Tracker, which the engine
// consults before Decide. The package does no I/O beyond resolving paths.
package gate
