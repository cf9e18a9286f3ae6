package docker

import (
	"os"
	"syscall"
)

// procAttr puts a docker CLI process in its own process group, killed if
// the plugin dies, however it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group p leads.
func killGroup(p *os.Process) {
	if p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}
