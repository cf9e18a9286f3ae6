//go:build !linux

package confine

import (
	"context"
	"errors"
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
