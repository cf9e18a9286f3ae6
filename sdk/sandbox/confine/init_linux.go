package confine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The init's two modes, as its first argument.
const (
	// initArg: inside the sandbox, apply Landlock, seccomp and rlimits,
	// then exec the program.
	initArg = "__sparrow-confine-init"
	// serverArg: apply the same, then serve a session's commands (see
	// Session).
	serverArg = "__sparrow-confine-server"
	// protocolArg: print initProtocol and exit, so a plugin can tell
	// whether another binary's init speaks its plan and control protocol.
	protocolArg = "__sparrow-confine-protocol"
	// initProtocol names the plan and control protocol this package's
	// init and server speak; change it whenever either changes.
	initProtocol = "sparrow-confine 2"
	// initPath is where the init binary is bound inside.
	initPath = "/.sparrow/init"
)

// initPlan is what the init applies inside, passed as one JSON argument.
type initPlan struct {
	ReadOnly  []string `json:"ro"`
	ReadWrite []string `json:"rw"`
	Devices   []string `json:"dev"`
	Landlock  int      `json:"landlock"`
	NProc     int64    `json:"nproc,omitempty"`
	AS        int64    `json:"as,omitempty"`
	FSize     int64    `json:"fsize,omitempty"`
	CPU       int64    `json:"cpu,omitempty"`
	Argv      []string `json:"argv"`
	// Keep is how many descriptors from 3 the program inherits.
	Keep int `json:"keep,omitempty"`
	// Cgroups are descriptors of cgroup.procs files, opened outside, that
	// the init joins before anything else.
	Cgroups []int `json:"cgroups,omitempty"`
	// Control is the session server's socket (serverArg only).
	Control int `json:"control,omitempty"`
	// Scratch are the directories a session server empties once no
	// command runs: what a command leaves there is gone for the next.
	Scratch []string `json:"scratch,omitempty"`
}

// Init runs the init (or a session's server) when the process was
// started as one and never returns then; otherwise it returns at once. Call it first in main of any
// binary used as Spec.Init.
func Init() {
	if len(os.Args) < 2 {
		return
	}
	var err error
	switch os.Args[1] {
	case initArg:
		err = runInit(os.Args[2:])
	case serverArg:
		err = runServer(os.Args[2:])
	case protocolArg:
		fmt.Println(initProtocol)
		os.Exit(0)
	default:
		return
	}
	var code exitCode
	if errors.As(err, &code) {
		os.Exit(int(code))
	}
	fmt.Fprintf(os.Stderr, "sparrow: confine: %v\n", err)
	os.Exit(127)
}

// CheckInit reports whether the binary at path can be Spec.Init for this
// package: an absolute path to an executable whose main calls Init from
// a build that speaks the same protocol (asked by running it once). A
// binary from another Sparrow version may lay sandboxes out differently,
// so it is refused rather than trusted to agree.
func CheckInit(ctx context.Context, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("init %q is not an absolute path", path)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, protocolArg)
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("init %s: %w", path, err)
	}
	if got := strings.TrimSpace(string(out)); got != initProtocol {
		return fmt.Errorf("init %s speaks %q, this plugin %q", path, got, initProtocol)
	}
	return nil
}

// exitCode is an init failure that has already been reported.
type exitCode int

func (c exitCode) Error() string { return "exit " + strconv.Itoa(int(c)) }

// runInit confines the calling thread and execs the program on it: Go
// may run other goroutines on other threads, but execve keeps only this
// one, with its Landlock domain and seccomp filter.
func runInit(args []string) error {
	if len(args) != 1 {
		return errors.New("init: want one plan argument")
	}
	var plan initPlan
	if err := json.Unmarshal([]byte(args[0]), &plan); err != nil {
		return fmt.Errorf("init: plan: %w", err)
	}
	if len(plan.Argv) == 0 {
		return errors.New("init: empty argv")
	}
	path, err := lookPath(plan.Argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sparrow: %v\n", err)
		if errors.Is(err, errNotExecutable) {
			return exitCode(126)
		}
		return exitCode(127)
	}
	if err := confineThread(plan); err != nil {
		return err
	}
	// Descriptors Sparrow or its own parent left inheritable end here.
	if err := unix.CloseRange(uint(3+plan.Keep), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	err = unix.Exec(path, plan.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "sparrow: %s: %v\n", plan.Argv[0], err)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOEXEC) {
		return exitCode(126)
	}
	return exitCode(127)
}

// confineThread joins the plan's cgroups, sets its rlimits, and locks
// the calling goroutine to its thread, which it confines: no_new_privs,
// Landlock, seccomp. Those hold for this thread and whatever it starts
// (execve, fork), not for the process's other threads.
func confineThread(plan initPlan) error {
	// Join the cgroups first: everything the program starts is counted.
	// Writing 0 moves the writer; the descriptor carries the permission.
	for _, fd := range plan.Cgroups {
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
		unix.Close(fd)
	}
	runtime.LockOSThread()
	if err := setRlimits(plan); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if plan.Landlock > 0 {
		if err := restrictLandlock(plan); err != nil {
			return err
		}
	}
	return installSeccomp()
}

var errNotExecutable = errors.New("not executable")

// lookPath finds name as a shell would, in the PATH the program gets and
// from the working directory the init is in (see lookPathIn).
func lookPath(name string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	return lookPathIn(name, os.Environ(), wd)
}

func setRlimits(plan initPlan) error {
	set := func(what string, res int, v int64) error {
		if v <= 0 {
			return nil
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: uint64(v), Max: uint64(v)}); err != nil {
			return fmt.Errorf("rlimit %s: %w", what, err)
		}
		return nil
	}
	return errors.Join(
		set("processes", unix.RLIMIT_NPROC, plan.NProc),
		set("address space", unix.RLIMIT_AS, plan.AS),
		set("file size", unix.RLIMIT_FSIZE, plan.FSize),
		set("cpu", unix.RLIMIT_CPU, plan.CPU),
		unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}),
	)
}

// Landlock access rights by the ABI that introduced them.
const (
	fsReadV1  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fsWriteV1 = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeBlock | ll.AccessFSMakeSym
	fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS is every filesystem right the ABI knows.
func handledFS(abi int) uint64 {
	h := uint64(fsReadV1 | fsWriteV1)
	if abi >= 2 {
		h |= ll.AccessFSRefer
	}
	if abi >= 3 {
		h |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		h |= ll.AccessFSIoctlDev
	}
	return h
}

// restrictLandlock allows reading below ReadOnly, everything below
// ReadWrite and using the devices, and nothing else; from ABI 6 it also
// keeps signals and abstract unix sockets inside the sandbox.
func restrictLandlock(plan initPlan) error {
	handled := handledFS(plan.Landlock)
	attr := ll.RulesetAttr{HandledAccessFS: handled}
	if plan.Landlock >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock: create ruleset: %w", err)
	}
	defer unix.Close(fd)
	read := uint64(fsReadV1)
	rw := handled
	dev := uint64(fsReadV1|ll.AccessFSWriteFile) | handled&uint64(ll.AccessFSTruncate|ll.AccessFSIoctlDev)
	for _, r := range []struct {
		paths  []string
		access uint64
	}{{plan.ReadOnly, read}, {plan.ReadWrite, rw}, {plan.Devices, dev}} {
		for _, p := range r.paths {
			if err := addPathRule(fd, p, r.access&handled); err != nil {
				return err
			}
		}
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock: restrict: %w", err)
	}
	return nil
}

func addPathRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock: open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if err := ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0); err != nil {
		return fmt.Errorf("landlock: rule for %s: %w", path, err)
	}
	return nil
}

// lookPathIn finds name as exec.LookPath does, for a command with
// environment env and working directory dir (the session server runs in
// neither): not found is "command not found" (127); found but not
// executable, or found relative to the working directory through PATH
// (exec.ErrDot), wraps errNotExecutable (126).
func lookPathIn(name string, env []string, dir string) (string, error) {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if strings.Contains(name, "/") {
		err := findExecutable(abs(name))
		switch {
		case err == nil:
			return abs(name), nil
		case errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("command not found: %s", name)
		}
		return "", fmt.Errorf("permission denied: %s: %w", name, errNotExecutable)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if findExecutable(abs(p)) != nil {
			continue
		}
		if !filepath.IsAbs(p) {
			// exec.LookPath refuses a program found relative to the
			// working directory (exec.ErrDot); so does lookPath.
			return "", fmt.Errorf("permission denied: %s: %w", name, errNotExecutable)
		}
		return p, nil
	}
	return "", fmt.Errorf("command not found: %s", name)
}

// findExecutable is exec.LookPath's check of one file.
func findExecutable(file string) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return unix.EISDIR
	}
	err = unix.Faccessat(unix.AT_FDCWD, file, unix.X_OK, unix.AT_EACCESS)
	if err == nil || (err != unix.ENOSYS && err != unix.EPERM) {
		return err
	}
	if fi.Mode()&0o111 != 0 {
		return nil
	}
	return os.ErrPermission
}
