//go:build !linux

package pluginhost

import "syscall"

// procAttr puts the plugin in its own process group; without a
// parent-death signal, the SDK's parent watch ends orphans.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
