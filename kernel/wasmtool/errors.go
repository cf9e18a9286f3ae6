package wasmtool

import (
	"fmt"
	"strings"
)

// ErrorKind says why a call failed, for callers that branch on it.
type ErrorKind int

const (
	// KindTimeout: the call ran past its time limit and was stopped.
	KindTimeout ErrorKind = iota + 1
	// KindCanceled: the caller's context was cancelled.
	KindCanceled
	// KindMemory: the guest tried to grow its memory past its cap.
	KindMemory
	// KindOutput: the guest wrote more than the output cap on stdout.
	KindOutput
	// KindExit: the guest exited with a non-zero code.
	KindExit
	// KindTrap: the guest trapped (unreachable, out-of-bounds access, ...).
	KindTrap
	// KindBadResult: the guest exited 0 but stdout is not a valid result.
	KindBadResult
)

func (k ErrorKind) String() string {
	switch k {
	case KindTimeout:
		return "timeout"
	case KindCanceled:
		return "canceled"
	case KindMemory:
		return "memory"
	case KindOutput:
		return "output"
	case KindExit:
		return "exit"
	case KindTrap:
		return "trap"
	case KindBadResult:
		return "bad result"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// CallError is a failed call: the tool broke or breached a limit. (A tool
// that ran fine and reports its own failure returns a Result with Error
// set instead.) Stderr is the tail of what the guest logged.
type CallError struct {
	Tool   string
	Kind   ErrorKind
	Detail string // "exceeded its 2s time limit", "exit 3", ...
	Stderr string
	Err    error // the underlying wazero error, if any
}

// stderrInError is how much of the stderr tail an error message quotes.
const stderrInError = 1024

func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString("tool " + e.Tool + ": " + e.Detail)
	if tail := strings.TrimSpace(e.Stderr); tail != "" && (e.Kind == KindExit || e.Kind == KindTrap) {
		if len(tail) > stderrInError {
			tail = "…" + tail[len(tail)-stderrInError:]
		}
		b.WriteString(": " + tail)
	}
	return b.String()
}

func (e *CallError) Unwrap() error { return e.Err }
