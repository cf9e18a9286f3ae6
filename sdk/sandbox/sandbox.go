// Package sandbox is the SDK for sandbox backends: where Sparrow runs every
// command. A backend implements Sandbox; its main calls Serve.
//
// The exec types here are also the Host service's: a tool never runs a
// command itself, it asks the kernel through Host, which gates it and hands
// it to the configured Sandbox.
package sandbox

import (
	"context"
	"io"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// Sandbox is one sandbox backend (local, docker, ssh, ...).
type Sandbox interface {
	plugin.Component
	// Capabilities says what the backend can enforce on this machine. A
	// backend that cannot run at all reports Available false with a reason.
	Capabilities(ctx context.Context) (Capabilities, error)
	// Prepare readies a workspace for a run and returns a session.
	Prepare(ctx context.Context, req PrepareRequest) (Session, error)
	// Exec runs one command to completion, streaming its output into io.
	// Cancelling ctx kills the command. A backend that cannot honour a
	// request (a limit it cannot enforce, network control it lacks) returns
	// an Exit with code 127 and says why on Stderr; it never pretends.
	Exec(ctx context.Context, req ExecRequest, io IO) (Exit, error)
	// Teardown releases a session. It is idempotent: tearing down an
	// unknown or released session is not an error.
	Teardown(ctx context.Context, sessionID string) (Released, error)
}

// Released is what a backend reports when a session is torn down.
type Released struct {
	// Notice is what the user should know now, such as the branch holding
	// the run's changes and how to merge or discard it. Shown at the end
	// of the run; empty when there is nothing to say.
	Notice string
}

// Capabilities describes what a backend enforces.
type Capabilities struct {
	Available           bool
	UnavailableReason   string
	NetworkControl      bool
	FilesystemIsolation bool
	ResourceLimits      bool
	PersistentWorkspace bool
	Remote              bool
	// Protections are the protections the backend has in force on this
	// machine, one short phrase each ("landlock ABI 7", "seccomp
	// filter"), as `sparrow doctor`, `sandbox list` and RunStarted report
	// them. Empty for a backend that has none.
	Protections []string
}

// Policy is what the kernel compiles from permission rules into every exec.
type Policy struct {
	// ReadWritePaths are absolute host paths commands may write; the
	// workspace is always first, --extra-write paths follow.
	ReadWritePaths []string
	// ReadOnlyPaths are absolute host paths commands may read beyond what
	// the backend shows anyway (--extra-read).
	ReadOnlyPaths []string
	// DeniedPaths are names or globs matched against every path component
	// inside the workspace (.git, .env, permissions.denied_paths).
	DeniedPaths  []string
	AllowNetwork bool
	EnvAllowlist []string
	// DenyRead are absolute host paths commands may neither read nor
	// write: the default secrets under the home directory and --deny-read.
	// A backend without filesystem isolation cannot hide them.
	DenyRead []string
	// DenyWrite are absolute host paths commands may read but not write
	// (--deny-write).
	DenyWrite []string
}

// PrepareRequest asks a backend to ready a workspace.
type PrepareRequest struct {
	RunID     string
	Workspace string
	Policy    Policy
}

// Session is a prepared workspace.
type Session struct {
	ID string
	// Workdir is the workspace root as commands see it.
	Workdir string
	// HostWorkspace is where the session's files live on this machine
	// when the backend put them somewhere other than the workspace asked
	// for (a git worktree): tools, checkpoints and the gate then work
	// there. Empty means the requested workspace.
	HostWorkspace string
}

// Limits bound one command. Zero means the backend's default.
type Limits struct {
	Timeout        time.Duration
	MemoryBytes    int64
	MaxPids        int64
	DiskBytes      int64
	CPUTime        time.Duration
	MaxOutputBytes int64
}

// ExecRequest is one command.
type ExecRequest struct {
	SessionID    string
	Argv         []string
	Workdir      string
	Env          map[string]string
	Limits       Limits
	AllowNetwork bool
}

// IO connects a command to its caller. Nil members mean no stdin and
// discarded output.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Signals delivers signal names ("INT", "TERM", "KILL", ...) to forward
	// to the running command.
	Signals <-chan string
}

// Exit is how a command ended.
type Exit struct {
	Code            int
	Signal          string
	TimedOut        bool
	OutputTruncated bool
	Duration        time.Duration
}

// ExitUnsupported is the exit code of a request a backend cannot honour.
const ExitUnsupported = 127
