//go:build unix && !linux

package singularity

import "syscall"

// procAttr gives each command its own process group. Without a
// parent-death signal, leftovers outlive a plugin that is killed; the
// backend reports itself unavailable off Linux anyway.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to a process group.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether a process group has any member, zombies
// included.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
