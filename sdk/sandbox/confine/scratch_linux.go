package confine

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// scratchDirs are the sandbox's private directories a session server
// empties between commands: /tmp, /dev/shm and a home that is an empty
// tmpfs, each a new tmpfs per command in a sandbox of its own.
func scratchDirs(spec Spec) []string {
	dirs := []string{"/tmp", "/dev/shm"}
	if spec.Home != "" && spec.Home != "/" && spec.HomeDir == "" {
		dirs = append(dirs, spec.Home)
	}
	return dirs
}

// emptyDir removes everything below dir that lies on dir's own
// filesystem, without following symlinks and without entering mount
// points: a host directory bound below /tmp (a workspace in /tmp) is
// never touched. It reports whether nothing but mount points is left.
func emptyDir(dir string) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return os.IsNotExist(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return false
	}
	clean, _ := emptyAt(fd, st.Dev)
	return clean
}

// emptyAt empties the directory open as fd (and closes fd). clean is
// false when something on dev could not be removed; mounts says mount
// points were kept, so the directory itself must stay.
func emptyAt(fd int, dev uint64) (clean, mounts bool) {
	d := os.NewFile(uintptr(fd), "")
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, false
	}
	clean = true
	for _, n := range names {
		var st unix.Stat_t
		if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // gone meanwhile
		}
		if st.Dev != dev {
			mounts = true
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			clean = unix.Unlinkat(fd, n, 0) == nil && clean
			continue
		}
		// A command may have left a directory it cannot enter or change.
		_ = unix.Fchmodat(fd, n, 0o700, 0)
		sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			clean = false
			continue
		}
		subClean, subMounts := emptyAt(sub, dev)
		clean = clean && subClean
		if subMounts {
			mounts = true
			continue
		}
		clean = unix.Unlinkat(fd, n, unix.AT_REMOVEDIR) == nil && clean
	}
	return clean, mounts
}

// removeIPC deletes the System V shared memory, semaphores and message
// queues commands left in the sandbox's IPC namespace.
func removeIPC() {
	for _, k := range []struct {
		file string
		rm   func(id int)
	}{
		{"/proc/sysvipc/shm", func(id int) { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) }},
		{"/proc/sysvipc/sem", func(id int) { _, _, _ = unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0) }},
		{"/proc/sysvipc/msg", func(id int) { _, _, _ = unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0) }},
	} {
		b, err := os.ReadFile(k.file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // header
		for sc.Scan() {
			// key id perms ...
			if f := strings.Fields(sc.Text()); len(f) > 1 {
				if id, err := strconv.Atoi(f[1]); err == nil {
					k.rm(id)
				}
			}
		}
	}
}

// parseStat reads the state and process group from /proc/PID/stat,
// counting fields from the last ')' (the command name may hold any).
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
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
