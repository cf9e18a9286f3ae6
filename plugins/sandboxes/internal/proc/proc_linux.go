package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// Attr gives each command its own process group and kills it if the
// plugin dies, however it dies.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// KillGroup sends SIGKILL to a process group.
func KillGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether a process group has a member that is not a
// zombie. Orphans killed in the group stay zombies until init reaps them,
// which some inits do lazily; those are gone for every purpose here. The
// kill(2) probe answers the common case without reading /proc.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited while we looked
		}
		state, pgrp, ok := ParseStat(stat)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// ParseStat reads the state and process group from /proc/PID/stat. The
// command name may contain spaces and parentheses, so fields are counted
// from the last ')'.
func ParseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	return f[0][0], pgrp, err == nil
}
