// Package engine runs the agentic loop: stream a model turn, put every tool
// call it asks for through the gate, execute what passes (tools as plugins,
// commands through the sandbox), feed results back, until the model is
// done, a hard stop fires, or the run is cancelled.
//
// Invariants:
//   - Every step is an event on the run's bus, in order; RunFinished is
//     always the last event, whatever ends the run.
//   - No tool call executes without a gate verdict of allow, or ask
//     answered yes by the Approver.
//   - A tool never runs a command itself: Host.Exec calls are matched to
//     the tool call that granted them (by token), gated again on the
//     actual command, and run in the run's sandbox session.
//   - Model output is untrusted input: malformed tool calls and arguments
//     go back to the model as tool errors; they never crash the run.
package engine
