package confine

import (
	"errors"
	"fmt"
)

// ErrSessionLost is a session sandbox that ended under a command: its
// server was killed (out of memory, or by the host) or never came up.
// Every process of the sandbox ended with it.
var ErrSessionLost = errors.New("the session sandbox is gone")

// ErrNotShareable is a Spec whose limits cannot be shared by a session's
// commands (a CPU time limit): run it with Command.
var ErrNotShareable = errors.New("limits that cannot be shared by a session's commands")

// NotStartedError is a command that could not be started (not found,
// not executable): it already said why on its stderr, as the per-command
// init does, and its exit code is Code (127 or 126).
type NotStartedError struct{ Code int }

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("command not started (exit %d)", e.Code)
}
