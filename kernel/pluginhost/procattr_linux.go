package pluginhost

import "syscall"

// procAttr puts the plugin in its own process group and has the kernel
// SIGKILL it when Sparrow dies, however Sparrow dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
