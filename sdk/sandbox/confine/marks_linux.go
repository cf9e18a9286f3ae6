package confine

import (
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// mark is what one path the sandbox hides, protects or binds was when it
// was laid out: a bind mount covers the file it was made on, and a
// file replaced on the host (rename, or remove and create) is no longer
// covered, so a session must notice.
type mark struct {
	path     string
	exists   bool
	dev, ino uint64
	mode     uint32
}

// takeMarks records every path spec's layout depends on: hidden paths
// and what hidden symlinks point to, the system's secrets and host keys,
// protected paths and the binds.
func takeMarks(spec Spec) []mark {
	var marks []mark
	add := func(p string) mark {
		m := mark{path: p}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			m.exists, m.dev, m.ino, m.mode = true, st.Dev, st.Ino, st.Mode&unix.S_IFMT
		}
		marks = append(marks, m)
		return m
	}
	hidden := slices.Clone(spec.Hidden)
	if spec.System {
		hidden = append(hidden, SystemSecrets...)
		keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
		hidden = append(hidden, keys...)
	}
	for _, p := range hidden {
		// hide covers what a hidden symlink points to as well.
		if m := add(filepath.Clean(p)); m.mode == unix.S_IFLNK {
			if t, err := filepath.EvalSymlinks(p); err == nil {
				add(t)
			}
		}
	}
	for _, list := range [][]string{spec.Protected, spec.ReadOnly, spec.ReadWrite, {spec.HomeDir}} {
		for _, p := range list {
			if p != "" {
				add(p)
			}
		}
	}
	return marks
}

func equalMarks(a, b []mark) bool { return slices.Equal(a, b) }
