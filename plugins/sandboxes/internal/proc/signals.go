//go:build unix

package proc

import (
	"strconv"
	"syscall"
)

// forwardable maps the signal names a caller may forward (sandbox.IO
// Signals) to signals; other names are ignored.
func forwardable(name string) (syscall.Signal, bool) {
	switch name {
	case "INT":
		return syscall.SIGINT, true
	case "TERM":
		return syscall.SIGTERM, true
	case "KILL":
		return syscall.SIGKILL, true
	case "HUP":
		return syscall.SIGHUP, true
	case "QUIT":
		return syscall.SIGQUIT, true
	case "USR1":
		return syscall.SIGUSR1, true
	case "USR2":
		return syscall.SIGUSR2, true
	}
	return 0, false
}

// signalName is a signal's conventional name without "SIG" ("KILL",
// "SEGV"), or its number for one without a portable name.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGABRT:
		return "ABRT"
	case syscall.SIGALRM:
		return "ALRM"
	case syscall.SIGBUS:
		return "BUS"
	case syscall.SIGFPE:
		return "FPE"
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGILL:
		return "ILL"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGPIPE:
		return "PIPE"
	case syscall.SIGQUIT:
		return "QUIT"
	case syscall.SIGSEGV:
		return "SEGV"
	case syscall.SIGSYS:
		return "SYS"
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGTRAP:
		return "TRAP"
	case syscall.SIGUSR1:
		return "USR1"
	case syscall.SIGUSR2:
		return "USR2"
	case syscall.SIGXCPU:
		return "XCPU"
	case syscall.SIGXFSZ:
		return "XFSZ"
	}
	return strconv.Itoa(int(sig))
}

// status turns how the process ended into an exit code and signal name:
// a command killed by signal N exits 128+N, as in a shell.
func status(ws syscall.WaitStatus) (int, string) {
	if ws.Signaled() {
		return 128 + int(ws.Signal()), signalName(ws.Signal())
	}
	return ws.ExitStatus(), ""
}
