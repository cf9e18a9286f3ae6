//go:build unix

package wasmtool

import (
	"os"
	"syscall"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
	"golang.org/x/sys/unix"
)

// platformOpenFlag adds the open flags only Unix has: O_DSYNC and
// O_DIRECTORY (see osOpenFlag).
func platformOpenFlag(flag sys.Oflag) int {
	var f int
	if flag&sys.O_DSYNC != 0 {
		f |= syscall.O_DSYNC
	}
	if flag&sys.O_DIRECTORY != 0 {
		f |= syscall.O_DIRECTORY
	}
	return f
}

// renameAt renames between two checked directories with renameat(2), so
// neither directory is looked up again by path.
func renameAt(oldDir *os.Root, oldName string, newDir *os.Root, newName string) sys.Errno {
	return withDirFds(oldDir, newDir, func(oldFd, newFd int) error {
		return unix.Renameat(oldFd, oldName, newFd, newName)
	})
}

// linkAt hard-links between two checked directories with linkat(2),
// without following a symbolic link at oldName.
func linkAt(oldDir *os.Root, oldName string, newDir *os.Root, newName string) sys.Errno {
	return withDirFds(oldDir, newDir, func(oldFd, newFd int) error {
		return unix.Linkat(oldFd, oldName, newFd, newName, 0)
	})
}

// withDirFds calls fn with file descriptors for two directory handles.
// os.Root does not expose its descriptor, so each is opened as ".".
func withDirFds(a, b *os.Root, fn func(aFd, bFd int) error) sys.Errno {
	af, err := a.Open(".")
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	defer af.Close()
	bf, err := b.Open(".")
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	defer bf.Close()
	ac, err := af.SyscallConn()
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	bc, err := bf.SyscallConn()
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	var opErr error
	ctlErr := ac.Control(func(aFd uintptr) {
		ctlErr := bc.Control(func(bFd uintptr) {
			opErr = fn(int(aFd), int(bFd))
		})
		if opErr == nil {
			opErr = ctlErr
		}
	})
	if opErr == nil {
		opErr = ctlErr
	}
	return sys.UnwrapOSError(opErr)
}

// futimes sets an open file's times; UTIME_OMIT keeps one. The times
// are set with microsecond precision (futimes(2)), the finest both Linux
// and Darwin offer on a descriptor without cgo.
func futimes(f *os.File, atim, mtim int64) sys.Errno {
	if atim == sys.UTIME_OMIT || mtim == sys.UTIME_OMIT {
		info, err := f.Stat()
		if err != nil {
			return sys.UnwrapOSError(err)
		}
		st := wsys.NewStat_t(info)
		if atim == sys.UTIME_OMIT {
			atim = st.Atim
		}
		if mtim == sys.UTIME_OMIT {
			mtim = st.Mtim
		}
	}
	c, err := f.SyscallConn()
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	tv := []unix.Timeval{unix.NsecToTimeval(atim), unix.NsecToTimeval(mtim)}
	var opErr error
	if err := c.Control(func(fd uintptr) { opErr = unix.Futimes(int(fd), tv) }); err != nil {
		return sys.UnwrapOSError(err)
	}
	return sys.UnwrapOSError(opErr)
}
