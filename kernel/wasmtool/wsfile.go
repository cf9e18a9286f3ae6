package wasmtool

import (
	"io"
	"io/fs"
	"os"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// wsFile is a regular file or directory opened in a workspaceFS. A
// directory's listing leaves out hidden entries. In a read-only
// workspace every write is refused the way wazero's ReadFS refuses it:
// EISDIR on a directory, EBADF otherwise.
type wsFile struct {
	sys.UnimplementedFile

	fs   *workspaceFS
	file *os.File
	// rel is the canonical workspace path the file was opened at: the
	// base for hiding directory entries and for reopening.
	rel  string
	flag sys.Oflag
	// st is the stat at open; its device, inode and type do not change.
	st     wsys.Stat_t
	closed bool
}

func (w *workspaceFS) newFile(f *os.File, rel string, flag sys.Oflag, info fs.FileInfo) *wsFile {
	return &wsFile{fs: w, file: f, rel: rel, flag: flag, st: wsys.NewStat_t(info)}
}

func (f *wsFile) isDir() bool { return f.st.Mode.IsDir() }

// Dev implements sys.File.
func (f *wsFile) Dev() (uint64, sys.Errno) { return f.st.Dev, 0 }

// Ino implements sys.File.
func (f *wsFile) Ino() (wsys.Inode, sys.Errno) { return f.st.Ino, 0 }

// IsDir implements sys.File.
func (f *wsFile) IsDir() (bool, sys.Errno) { return f.isDir(), 0 }

// IsAppend implements sys.File.
func (f *wsFile) IsAppend() bool { return f.flag&sys.O_APPEND != 0 }

// SetAppend implements sys.File. The append mode of an open descriptor
// cannot change, so the file is opened again at its path, checked to be
// the same file, and positioned where the old one was.
func (f *wsFile) SetAppend(enable bool) sys.Errno {
	switch {
	case f.closed:
		return sys.EBADF
	case f.isDir():
		return sys.EISDIR
	}
	flag := f.flag &^ (sys.O_CREAT | sys.O_EXCL | sys.O_TRUNC | sys.O_APPEND)
	if enable {
		flag |= sys.O_APPEND
	}
	offset, err := f.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	e, werr := f.fs.walk(f.rel, true)
	if werr != nil {
		return werr.errno
	}
	defer e.close()
	if !e.exists() {
		return sys.ENOENT
	}
	info, err := f.file.Stat()
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	nf, _, errno := openSame(e.dir, e.name, osOpenFlag(flag), info)
	switch errno {
	case 0:
	case sys.EAGAIN:
		return sys.ENOENT // the file at rel is another one now
	default:
		return errno
	}
	if _, err := nf.Seek(offset, io.SeekStart); err != nil {
		_ = nf.Close()
		return sys.UnwrapOSError(err)
	}
	_ = f.file.Close()
	f.file, f.flag = nf, flag
	return 0
}

// Stat implements sys.File.
func (f *wsFile) Stat() (wsys.Stat_t, sys.Errno) {
	if f.closed {
		return wsys.Stat_t{}, sys.EBADF
	}
	info, err := f.file.Stat()
	if err != nil {
		return wsys.Stat_t{}, sys.UnwrapOSError(err)
	}
	return wsys.NewStat_t(info), 0
}

// readErr is the error of a read before it is tried, or zero.
func (f *wsFile) readErr() sys.Errno {
	switch {
	case f.closed:
		return sys.EBADF
	case f.isDir():
		return sys.EISDIR
	}
	return 0
}

// writeErr is the error of a write before it is tried, or zero.
func (f *wsFile) writeErr() sys.Errno {
	switch {
	case f.closed:
		return sys.EBADF
	case f.isDir():
		return sys.EISDIR
	case !f.fs.writable:
		return sys.EBADF
	}
	return 0
}

// Read implements sys.File; end of file is a short count, not an error.
func (f *wsFile) Read(buf []byte) (int, sys.Errno) {
	if errno := f.readErr(); errno != 0 || len(buf) == 0 {
		return 0, errno
	}
	n, err := f.file.Read(buf)
	return n, sys.UnwrapOSError(err)
}

// Pread implements sys.File.
func (f *wsFile) Pread(buf []byte, off int64) (int, sys.Errno) {
	switch errno := f.readErr(); {
	case errno != 0:
		return 0, errno
	case off < 0:
		return 0, sys.EINVAL
	case len(buf) == 0:
		return 0, 0
	}
	n, err := f.file.ReadAt(buf, off)
	return n, sys.UnwrapOSError(err)
}

// fileOffset is int64 under another name. sys.File.Seek returns an Errno
// where io.Seeker returns an error, and go vet's stdmethods check flags
// any Seek(int64, int) that is not io.Seeker's; it does not look at a
// Seek whose offset is spelled differently.
type fileOffset = int64

// Seek implements sys.File. On a directory only a rewind (0, io.SeekStart)
// is allowed: the next Readdir starts over and sees current entries.
func (f *wsFile) Seek(offset fileOffset, whence int) (int64, sys.Errno) {
	switch {
	case f.closed:
		return 0, sys.EBADF
	case whence < io.SeekStart || whence > io.SeekEnd:
		return 0, sys.EINVAL
	case f.isDir() && (offset != 0 || whence != io.SeekStart):
		return 0, sys.EISDIR
	}
	n, err := f.file.Seek(offset, whence)
	return n, sys.UnwrapOSError(err)
}

// Readdir implements sys.File. Entries come without "." and ".." (wazero
// adds those), with their inode and type, and without hidden ones; a
// short count still means the end of the directory.
func (f *wsFile) Readdir(n int) ([]sys.Dirent, sys.Errno) {
	if f.closed || !f.isDir() {
		return nil, sys.EBADF
	}
	var out []sys.Dirent
	for n <= 0 || len(out) < n {
		want := -1
		if n > 0 {
			want = n - len(out)
		}
		// os.File.Readdir on a file opened through os.Root stats each
		// entry relative to the open directory, never by host path.
		infos, err := f.file.Readdir(want)
		if errno := sys.UnwrapOSError(err); errno != 0 {
			if errno == sys.ENOTDIR || errno == sys.EINVAL {
				errno = sys.EBADF
			}
			return nil, errno
		}
		for _, info := range infos {
			rel := info.Name()
			if f.rel != "." {
				rel = f.rel + "/" + rel
			}
			if f.fs.hidden(rel) {
				continue
			}
			st := wsys.NewStat_t(info)
			out = append(out, sys.Dirent{Name: info.Name(), Ino: st.Ino, Type: info.Mode().Type()})
		}
		if n <= 0 || len(infos) < want {
			break
		}
	}
	return out, 0
}

// Write implements sys.File.
func (f *wsFile) Write(buf []byte) (int, sys.Errno) {
	if errno := f.writeErr(); errno != 0 || len(buf) == 0 {
		return 0, errno
	}
	n, err := f.file.Write(buf)
	return n, sys.UnwrapOSError(err)
}

// Pwrite implements sys.File. A file in append mode has no position to
// write at: EINVAL.
func (f *wsFile) Pwrite(buf []byte, off int64) (int, sys.Errno) {
	switch errno := f.writeErr(); {
	case errno != 0:
		return 0, errno
	case off < 0 || f.IsAppend():
		return 0, sys.EINVAL
	case len(buf) == 0:
		return 0, 0
	}
	n, err := f.file.WriteAt(buf, off)
	return n, sys.UnwrapOSError(err)
}

// Truncate implements sys.File.
func (f *wsFile) Truncate(size int64) sys.Errno {
	switch errno := f.writeErr(); {
	case errno != 0:
		return errno
	case size < 0:
		return sys.EINVAL
	}
	return sys.UnwrapOSError(f.file.Truncate(size))
}

// Sync implements sys.File.
func (f *wsFile) Sync() sys.Errno {
	if f.closed || !f.fs.writable {
		return sys.EBADF
	}
	return sys.UnwrapOSError(f.file.Sync())
}

// Datasync implements sys.File, as Sync.
func (f *wsFile) Datasync() sys.Errno { return f.Sync() }

// Utimens implements sys.File.
func (f *wsFile) Utimens(atim, mtim int64) sys.Errno {
	if f.closed || !f.fs.writable {
		return sys.EBADF
	}
	return futimes(f.file, atim, mtim)
}

// Close implements sys.File; closing twice is not an error.
func (f *wsFile) Close() sys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return sys.UnwrapOSError(f.file.Close())
}

var _ sys.File = (*wsFile)(nil)
