package pluginhost

import "syscall"

// procAttr puts the plugin in its own process group and has the kernel
// signal it when Sparrow dies, however Sparrow dies. The signal is SIGTERM,
// not SIGKILL, so a plugin holding processes of its own (a sandbox's
// running commands) can end them first; the SDK exits within two seconds
// of it, and a plugin that does not catch it dies of it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
