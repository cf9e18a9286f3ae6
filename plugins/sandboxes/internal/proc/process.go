package proc

import (
	"fmt"
	"os"
	"syscall"
)

// Process is one command as Run supervises it: a local process group
// (Run) or a command a session sandbox's server started (RunProcess).
type Process interface {
	// Start starts the command with these descriptors as its stdin (nil:
	// /dev/null), stdout and stderr; the caller closes its copies after.
	Start(stdin, stdout, stderr *os.File) error
	// Wait waits for the command's first process to exit.
	Wait() (syscall.WaitStatus, error)
	// Signal sends sig to every process of the command's group.
	Signal(sig syscall.Signal)
	// Alive reports whether a process of the group is still running.
	Alive() bool
	// Stop kills whatever the command left once its group was drained;
	// it is called exactly once, last.
	Stop()
}

// NotStartedError is a command that could not be started: Run reports
// Err on stderr and exits with Options.StartFailure; RunProcess exits
// with Code (the process already said why on the command's stderr).
type NotStartedError struct {
	Code int
	Err  error
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("command not started (exit %d): %v", e.Code, e.Err)
}

func (e *NotStartedError) Unwrap() error { return e.Err }
