//go:build unix && !linux

package proc

import "syscall"

// Attr gives each command its own process group. Without a
// parent-death signal, leftovers outlive a plugin that is killed.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// KillGroup sends SIGKILL to a process group.
func KillGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether a process group has any member, zombies
// included.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
