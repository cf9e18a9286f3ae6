package local

import "syscall"

// procAttr gives each command its own process group and kills it if the
// plugin dies, however it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
