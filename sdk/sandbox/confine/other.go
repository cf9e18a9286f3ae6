//go:build !linux

package confine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// Probe reports that confinement needs Linux.
func Probe(context.Context) Report {
	return Report{Missing: []string{"Linux namespaces, Landlock and seccomp: local-hardened runs only on Linux (this is " + runtime.GOOS + ")"}}
}

// Init does nothing off Linux.
func Init() {}

// Cmd is unavailable off Linux.
type Cmd struct {
	*exec.Cmd
	Notes []string
}

// Cleanup does nothing off Linux.
func (c *Cmd) Cleanup() {}

// Kill does nothing off Linux.
func (c *Cmd) Kill() {}

// OOMKilled is always false off Linux.
func (c *Cmd) OOMKilled() bool { return false }

// Command always fails off Linux.
func Command(Spec, Report) (*Cmd, error) {
	return nil, errors.New("cannot confine: " + Probe(context.Background()).Missing[0])
}

// SystemSecrets is empty off Linux.
var SystemSecrets []string

// Signal never delivers off Linux.
func (c *Cmd) Signal(syscall.Signal) bool { return false }

// cgroupRoot has no cgroups off Linux.
type cgroupRoot struct{}

// CheckInit always fails off Linux: there is no init to check.
func CheckInit(context.Context, string) error {
	return errors.New("cannot confine: " + Probe(context.Background()).Missing[0])
}

// Session is unavailable off Linux.
type Session struct {
	// Notes is empty off Linux.
	Notes []string
}

// StartSession always fails off Linux.
func StartSession(Spec, Report) (*Session, error) {
	return nil, errors.New("cannot confine: " + Probe(context.Background()).Missing[0])
}

// Command always fails off Linux.
func (*Session) Command([]string, string, []string) (*Process, error) {
	return nil, ErrSessionLost
}

// Done is closed off Linux.
func (*Session) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Usable is false off Linux.
func (*Session) Usable() bool { return false }

// Stale is true off Linux.
func (*Session) Stale() bool { return true }

// Pid is 0 off Linux.
func (*Session) Pid() int { return 0 }

// OOMKills is 0 off Linux.
func (*Session) OOMKills() int64 { return 0 }

// Close does nothing off Linux.
func (*Session) Close() {}

// Process is unavailable off Linux.
type Process struct{}

// Start always fails off Linux.
func (*Process) Start(_, _, _ *os.File) error { return ErrSessionLost }

// Wait always fails off Linux.
func (*Process) Wait() (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	return ws, ErrSessionLost
}

// Signal does nothing off Linux.
func (*Process) Signal(syscall.Signal) {}

// Alive is false off Linux.
func (*Process) Alive() bool { return false }

// Stop does nothing off Linux.
func (*Process) Stop() {}
