package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// fsOp is one file-system call of the "fs" mode. Paths are relative to
// the workspace.
type fsOp struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	// To is the second path of rename and link, and the target of symlink.
	To   string `json:"to,omitempty"`
	Text string `json:"text,omitempty"`
	Size int64  `json:"size,omitempty"`
}

// runOps runs each op and reports one line per op: "ok", "ok:<result>",
// or the name of the errno it failed with.
func runOps(ws string, ops []fsOp) string {
	lines := make([]string, len(ops))
	for i, o := range ops {
		res, err := runOp(ws, o)
		switch {
		case err != nil:
			lines[i] = errName(err)
		case res == "":
			lines[i] = "ok"
		default:
			lines[i] = "ok:" + res
		}
	}
	return strings.Join(lines, "\n")
}

func runOp(ws string, o fsOp) (string, error) {
	p, to := path.Join(ws, o.Path), path.Join(ws, o.To)
	switch o.Op {
	case "read":
		b, err := os.ReadFile(p)
		return string(b), err
	case "stat", "lstat":
		stat := os.Stat
		if o.Op == "lstat" {
			stat = os.Lstat
		}
		fi, err := stat(p)
		if err != nil {
			return "", err
		}
		return kind(fi.Mode()), nil
	case "list":
		entries, err := os.ReadDir(p)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		return strings.Join(names, ","), err
	case "write":
		return "", os.WriteFile(p, []byte(o.Text), 0o644)
	case "create":
		return "", writeWith(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, o.Text)
	case "append":
		return "", writeWith(p, os.O_WRONLY|os.O_APPEND, o.Text)
	case "truncate":
		return "", os.Truncate(p, o.Size)
	case "mkdir":
		return "", os.Mkdir(p, 0o755)
	case "rmdir":
		return "", syscall.Rmdir(p)
	case "unlink":
		return "", syscall.Unlink(p)
	case "rename":
		return "", os.Rename(p, to)
	case "link":
		return "", os.Link(p, to)
	case "symlink": // o.Path becomes a link to o.To, as written
		return "", os.Symlink(o.To, p)
	case "readlink":
		return os.Readlink(p)
	case "chtimes":
		t := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
		return "", os.Chtimes(p, t, t)
	case "chmod":
		return "", os.Chmod(p, 0o600)
	case "rawopen": // path_open on the workspace descriptor, uncleaned
		return "", rawOpenErr(o.Path)
	}
	return "", fmt.Errorf("unknown op %q", o.Op)
}

func writeWith(p string, flag int, text string) error {
	f, err := os.OpenFile(p, flag, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "dir"
	case m.IsRegular():
		return "file"
	}
	return m.Type().String()
}

// errnos names the errors a test expects, independent of how Go's wasip1
// port spells them.
var errnos = map[syscall.Errno]string{
	syscall.EACCES: "EACCES", syscall.EAGAIN: "EAGAIN", syscall.EBADF: "EBADF",
	syscall.EEXIST: "EEXIST", syscall.EINVAL: "EINVAL", syscall.EIO: "EIO",
	syscall.EISDIR: "EISDIR", syscall.ELOOP: "ELOOP", syscall.ENOENT: "ENOENT",
	syscall.ENOSYS: "ENOSYS", syscall.ENOTDIR: "ENOTDIR", syscall.ENOTEMPTY: "ENOTEMPTY",
	syscall.ENOTSUP: "ENOTSUP", syscall.EPERM: "EPERM", syscall.EROFS: "EROFS",
	syscall.EXDEV: "EXDEV",
}

func errName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name, ok := errnos[errno]; ok {
			return name
		}
	}
	return err.Error()
}

// rawOpenErr is path_open of p on descriptor 3, the workspace preopen,
// read-only, without Go's path handling; the file is closed again.
func rawOpenErr(p string) error {
	b := []byte(p)
	var fd int32
	if errno := pathOpen(3, 1, unsafe.Pointer(&b[0]), uint32(len(b)), 0, 1<<1, 1<<1, 0, unsafe.Pointer(&fd)); errno != 0 {
		return syscall.Errno(errno)
	}
	return syscall.Close(int(fd))
}
