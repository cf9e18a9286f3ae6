//go:build unix && !linux

package docker

import (
	"os"
	"syscall"
)

// procAttr puts a docker CLI process in its own process group. Without a
// parent-death signal, a `docker run` whose plugin died still ends: its
// stdin closes with the plugin, which ends the container.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group p leads.
func killGroup(p *os.Process) {
	if p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}
