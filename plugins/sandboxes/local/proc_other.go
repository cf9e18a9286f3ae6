//go:build unix && !linux

package local

import "syscall"

// procAttr gives each command its own process group. Without a
// parent-death signal, leftovers outlive a plugin that is killed.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// groupAlive reports whether a process group has any member, zombies
// included.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
