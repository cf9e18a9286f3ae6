package confine

import (
	"os"
	"time"
)

// InitEnv is the environment variable through which Sparrow hands
// sandbox backends the init it confines plugins with (sparrow-init, a
// small binary beside sparrow), for their commands. A backend checks it
// with CheckInit before using it as Spec.Init.
const InitEnv = "SPARROW_CONFINE_INIT"

// Spec is one confined process. Paths are absolute host paths; a path is
// visible inside at the same place.
type Spec struct {
	// Argv is the program and its arguments; a name without a slash is
	// looked up in the PATH of Env, inside the sandbox.
	Argv []string
	// Dir is the working directory; it must be visible.
	Dir string
	// Env is the complete environment (NAME=VALUE); nothing else leaks in.
	Env []string
	// System adds the read-only system view toolchains need: /usr, /bin,
	// /sbin, /lib*, /opt and /etc without its secrets (shadow, sudoers,
	// host keys, ...). See SystemSecrets.
	System bool
	// ReadOnly are host paths bound read-only.
	ReadOnly []string
	// ReadWrite are host paths bound read-write.
	ReadWrite []string
	// Protected are paths below ReadWrite that stay readable but not
	// writable (a workspace's .git). Missing ones are skipped.
	Protected []string
	// Hidden are paths that appear empty: a directory becomes an empty
	// read-only directory, a file an empty read-only file. A symlink hides
	// what it points to as well. Missing ones are skipped.
	Hidden []string
	// Home, when set, is a private writable directory at that path (HOME
	// for tools that want one); paths bound below it stay visible. It is
	// empty, unless HomeDir names a host directory to bind there instead,
	// which keeps caches (Go's build cache, npm's, pip's) from one
	// command to the next without showing the user's real home.
	Home string
	// HomeDir is the host directory behind Home; empty means an empty
	// tmpfs.
	HomeDir string
	// Network keeps the host's network; otherwise the process gets a
	// network namespace of its own with only a loopback nobody else
	// shares, and no unix sockets of the host are reachable.
	Network bool
	// Limits bound the process tree.
	Limits Limits
	// Init is the host path of a binary whose main calls Init, bound into
	// the sandbox. Empty means this process's own executable, handed over
	// as a descriptor: nothing is copied, and it works for a program run
	// from a sealed memory file, which cannot be bound.
	Init string
	// ExtraFiles are inherited by the program as descriptors 3, 4, ...;
	// a program can be run from one as "/proc/self/fd/3" (a sealed
	// memory file that cannot be bound into the sandbox).
	ExtraFiles []*os.File
}

// Limits bound a confined process tree. Zero means unlimited, except
// TmpBytes, whose zero means DefaultTmpBytes.
type Limits struct {
	// MemoryBytes caps the tree's memory (cgroup memory.max, or the
	// address space of each process where no cgroup can be made).
	MemoryBytes int64
	// Pids caps the number of processes and threads (cgroup pids.max, or
	// RLIMIT_NPROC for users other than root).
	Pids int64
	// FileBytes caps the size of any one file written (RLIMIT_FSIZE).
	FileBytes int64
	// TmpBytes is the size of the private /tmp.
	TmpBytes int64
	// CPUTime caps each process's CPU time (RLIMIT_CPU).
	CPUTime time.Duration
}

// DefaultTmpBytes is the private /tmp's size when Limits sets none.
const DefaultTmpBytes = 512 << 20
