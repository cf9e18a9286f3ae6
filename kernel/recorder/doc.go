// Package recorder writes a run to disk and reads it back.
//
// A run lives in <stateDir>/runs/<run-id>/: inputs.json (what the run was
// asked to do, with what: task, workspace, model, sandbox, repository HEAD,
// the config snapshot) and events.jsonl (every event of the run, one NDJSON
// line each, in sequence order). `sparrow runs`, `replay` and `rewind` read
// them back with [Open] and [List].
//
// Invariants:
//
//   - Nothing already published is lost to a crash: every event is written
//     to the file as one complete line before [Recorder.Write] returns, and
//     the file is fsynced on RunFinished and on Close.
//   - A failed write is reported at once and poisons the Recorder: no line
//     is ever appended after a torn one, so a damaged file is only ever
//     damaged at its end, which [Open] tolerates (Run.Truncated).
//   - inputs.json is replaced atomically (temp file, fsync, rename): a
//     reader sees the old file or the new one, never a partial one.
//   - Run directories are 0700 and files 0600: a recording can hold a task
//     or output the user would not share.
//   - A malformed line in the middle of events.jsonl is an error naming the
//     file and line.
package recorder
