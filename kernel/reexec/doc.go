// Package reexec re-executes a recorded run: it rebuilds the workspace the
// run started from in a scratch directory and compares the events of the
// new run with the recording, step by step, to find where they part.
package reexec
