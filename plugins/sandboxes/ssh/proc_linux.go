package ssh

import "syscall"

// procAttr keeps ssh out of the terminal's process group, so a Ctrl-C
// meant for Sparrow never cuts a connection before the remote command is
// stopped properly, and kills it if the plugin dies, however it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
