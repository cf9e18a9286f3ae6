package proc

import (
	"io"
	"syscall"
	"time"
)

// KillGrace is how long a command gets between SIGTERM and SIGKILL.
const KillGrace = 2 * time.Second

// Options say how Run runs one command.
type Options struct {
	// Backend names the backend in the messages Run writes to stderr.
	Backend string
	// Timeout ends the command: SIGTERM, then SIGKILL after KillGrace;
	// the exit is 124 and TimedOut.
	Timeout time.Duration
	// Limit caps stdout and stderr together, in bytes.
	Limit int64
	// Tap also gets everything the command writes to stderr, cap or no
	// cap; nil for none.
	Tap io.Writer
	// Live records the command's group while it runs.
	Live *Groups
	// Relay is set when the leader relays signals to the real command
	// (apptainer's starter): forwarded signals and the first SIGTERM go
	// to the leader alone, so none arrives twice; SIGKILL, which cannot
	// be relayed, goes to the group. Otherwise signals go to the group.
	Relay bool
	// StartFailure is the exit code when the command cannot be started.
	StartFailure int
	// Deliver, when set, hands a forwarded signal (not KILL) to the
	// command itself, for a leader that would die of it instead of
	// passing it on (bubblewrap); false means it could not, and the group
	// gets the signal as usual.
	Deliver func(syscall.Signal) bool
}
