package wasmtool

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// workspaceFS is the workspace as a guest sees it at /workspace: a wazero
// sys.FS confined to one host directory by os.Root, with the hidden paths
// taken out and, unless writable, every change refused.
//
// Paths are resolved by walk (resolve.go), which follows symbolic links
// itself so that none leads out of the workspace or into a hidden path;
// see doc.go for the rules. It is used by one call at a time (a guest is
// single-threaded), but the host directory may change under it.
type workspaceFS struct {
	sys.UnimplementedFS

	root     *os.Root
	writable bool
	hide     func(rel string) bool
}

// openWorkspace opens dir as a workspace file system. hide may be nil.
func openWorkspace(dir string, writable bool, hide func(rel string) bool) (*workspaceFS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &workspaceFS{root: root, writable: writable, hide: hide}, nil
}

// Close releases the workspace directory. Files the guest opened are
// closed by wazero with the instance.
func (w *workspaceFS) Close() error { return w.root.Close() }

// String is the host directory, for wazero's debug output.
func (w *workspaceFS) String() string { return w.root.Name() }

// openAttempts bounds how often OpenFile looks again at a path that
// changed while it was being opened.
const openAttempts = 3

// accessMode masks the mutually exclusive O_RDONLY, O_WRONLY and O_RDWR.
const accessMode = sys.O_RDONLY | sys.O_WRONLY | sys.O_RDWR

// osOpenFlag converts the flags of sys.FS.OpenFile that are passed on to
// the open itself. O_CREAT, O_EXCL, O_TRUNC and O_NOFOLLOW are the
// caller's business (see workspaceFS.open); O_NONBLOCK means nothing for
// the regular files and directories a workspace opens.
func osOpenFlag(flag sys.Oflag) int {
	var f int
	switch flag & accessMode {
	case sys.O_RDWR:
		f = os.O_RDWR
	case sys.O_WRONLY:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	if flag&sys.O_APPEND != 0 {
		f |= os.O_APPEND
	}
	if flag&sys.O_SYNC != 0 {
		f |= os.O_SYNC
	}
	return f | platformOpenFlag(flag)
}

// OpenFile implements sys.FS. A symbolic link is followed unless
// O_NOFOLLOW is set (then opening one is ELOOP) or the open is
// O_CREAT|O_EXCL (then it is EEXIST). Only regular files and directories
// can be opened: a FIFO or device could block the host thread for good,
// so it is ENOTSUP. A file that is swapped for another while it is being
// opened is looked up again, and EAGAIN if it keeps changing.
func (w *workspaceFS) OpenFile(p string, flag sys.Oflag, perm fs.FileMode) (sys.File, sys.Errno) {
	writes := flag&accessMode != sys.O_RDONLY
	if !w.writable && (writes || flag&sys.O_TRUNC != 0) {
		if flag&sys.O_DIRECTORY != 0 {
			return nil, sys.EISDIR
		}
		return nil, sys.EROFS
	}
	if flag&sys.O_CREAT != 0 && flag&sys.O_DIRECTORY != 0 {
		return nil, sys.EINVAL
	}
	for range openAttempts {
		f, errno, again := w.open(p, flag, perm&fs.ModePerm)
		if !again {
			return f, errno
		}
	}
	return nil, sys.EAGAIN
}

// open is one attempt of OpenFile; again reports that the path changed
// under it and the caller should look again.
func (w *workspaceFS) open(p string, flag sys.Oflag, perm fs.FileMode) (_ sys.File, _ sys.Errno, again bool) {
	creat, excl := flag&sys.O_CREAT != 0, flag&sys.O_EXCL != 0
	follow := (flag&sys.O_NOFOLLOW == 0 && !(creat && excl)) || strings.HasSuffix(p, "/")
	e, werr := w.walk(p, follow)
	if werr != nil {
		if werr.hiddenLast && creat {
			return nil, sys.EPERM, false
		}
		return nil, werr.errno, false
	}
	defer e.close()

	if !e.exists() {
		switch {
		case !creat:
			return nil, sys.ENOENT, false
		case !w.writable:
			return nil, sys.EROFS, false
		case e.mustDir:
			return nil, sys.EISDIR, false
		}
		// O_EXCL: os.Root never follows a symbolic link that appears
		// meanwhile, and EEXIST means something did.
		f, err := e.dir.OpenFile(e.name, osOpenFlag(flag)|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && !excl {
			return nil, 0, true
		}
		if err != nil {
			return nil, sys.UnwrapOSError(err), false
		}
		info, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return nil, sys.UnwrapOSError(err), false
		}
		return w.newFile(f, e.rel, flag, info), 0, false
	}

	info := e.info
	switch mode := info.Mode(); {
	case creat && excl:
		return nil, sys.EEXIST, false
	case mode&fs.ModeSymlink != 0:
		return nil, sys.ELOOP, false
	case flag&sys.O_DIRECTORY != 0 && !mode.IsDir():
		return nil, sys.ENOTDIR, false
	case mode.IsDir() && (flag&accessMode != sys.O_RDONLY || flag&sys.O_TRUNC != 0):
		return nil, sys.EISDIR, false
	case !mode.IsDir() && !mode.IsRegular():
		return nil, sys.ENOTSUP, false
	}
	f, info, errno := openSame(e.dir, e.name, osOpenFlag(flag), info)
	switch {
	case errno == sys.EAGAIN:
		return nil, 0, true
	case errno != 0:
		return nil, errno, false
	}
	if flag&sys.O_TRUNC != 0 {
		if errno := truncateOpened(e, f, flag, info); errno != 0 {
			_ = f.Close()
			return nil, errno, errno == sys.EAGAIN
		}
	}
	return w.newFile(f, e.rel, flag, info), 0, false
}

// openSame opens name in dir and checks it is the file Lstat saw; a file
// swapped meanwhile is EAGAIN. os.Root follows a symbolic link swapped in
// (never out of the workspace); the check refuses whatever it reached.
// It returns the file's own stat.
func openSame(dir *os.Root, name string, flag int, want fs.FileInfo) (*os.File, fs.FileInfo, sys.Errno) {
	f, err := dir.OpenFile(name, flag, 0)
	if err != nil {
		return nil, nil, sys.UnwrapOSError(err)
	}
	got, err := f.Stat()
	if err != nil || !os.SameFile(want, got) {
		_ = f.Close()
		return nil, nil, sys.EAGAIN
	}
	return f, got, 0
}

// truncateOpened empties a file just opened with O_TRUNC. The truncation
// is done on the checked file, never by the open itself, so O_TRUNC
// cannot reach a file swapped in by a symbolic link. A file opened
// read-only (O_RDONLY|O_TRUNC truncates on Linux too) is truncated
// through a second, checked, write-only handle.
func truncateOpened(e entry, f *os.File, flag sys.Oflag, info fs.FileInfo) sys.Errno {
	if flag&accessMode != sys.O_RDONLY {
		return sys.UnwrapOSError(f.Truncate(0))
	}
	wf, _, errno := openSame(e.dir, e.name, os.O_WRONLY, info)
	if errno != 0 {
		return errno
	}
	defer wf.Close()
	return sys.UnwrapOSError(wf.Truncate(0))
}

// Lstat implements sys.FS: a symbolic link is reported, not followed
// (unless the path ends in a slash).
func (w *workspaceFS) Lstat(p string) (wsys.Stat_t, sys.Errno) {
	return w.stat(p, strings.HasSuffix(p, "/"))
}

// Stat implements sys.FS, following symbolic links.
func (w *workspaceFS) Stat(p string) (wsys.Stat_t, sys.Errno) {
	return w.stat(p, true)
}

func (w *workspaceFS) stat(p string, follow bool) (wsys.Stat_t, sys.Errno) {
	e, werr := w.walk(p, follow)
	if werr != nil {
		return wsys.Stat_t{}, werr.errno
	}
	defer e.close()
	if !e.exists() {
		return wsys.Stat_t{}, sys.ENOENT
	}
	return wsys.NewStat_t(e.info), 0
}

// Readlink implements sys.FS. It returns a visible link's target as
// written, even when following it would be refused.
func (w *workspaceFS) Readlink(p string) (string, sys.Errno) {
	e, werr := w.walk(p, false)
	if werr != nil {
		return "", werr.errno
	}
	defer e.close()
	switch {
	case !e.exists():
		return "", sys.ENOENT
	case !e.isSymlink():
		return "", sys.EINVAL
	}
	target, err := e.dir.Readlink(e.name)
	if err != nil {
		return "", sys.UnwrapOSError(err)
	}
	return target, 0
}

// change resolves the path of a call that modifies the workspace. The
// entry's directory is where the change happens, by name, so no symbolic
// link is followed after the check. creates says the call makes the
// entry: a hidden last element is then EPERM, not ENOENT.
func (w *workspaceFS) change(p string, follow, creates bool) (entry, sys.Errno) {
	if !w.writable {
		return entry{}, sys.EROFS
	}
	e, werr := w.walk(p, follow)
	switch {
	case werr == nil:
		return e, 0
	case werr.hiddenLast && creates:
		return entry{}, sys.EPERM
	}
	return entry{}, werr.errno
}

// Mkdir implements sys.FS.
func (w *workspaceFS) Mkdir(p string, perm fs.FileMode) sys.Errno {
	e, errno := w.change(p, false, true)
	if errno != 0 {
		return errno
	}
	defer e.close()
	if e.exists() {
		return sys.EEXIST
	}
	return sys.UnwrapOSError(e.dir.Mkdir(e.name, perm&fs.ModePerm))
}

// Chmod implements sys.FS, following symbolic links. Only the permission
// bits change: setuid, setgid and sticky are dropped. (WASI preview 1
// has no chmod; this is for completeness.)
func (w *workspaceFS) Chmod(p string, perm fs.FileMode) sys.Errno {
	e, errno := w.change(p, true, false)
	if errno != 0 {
		return errno
	}
	defer e.close()
	if !e.exists() {
		return sys.ENOENT
	}
	// os.Root acts on a symbolic link swapped in meanwhile, not its target.
	return sys.UnwrapOSError(e.dir.Chmod(e.name, perm&fs.ModePerm))
}

// Utimens implements sys.FS, following symbolic links.
func (w *workspaceFS) Utimens(p string, atim, mtim int64) sys.Errno {
	e, errno := w.change(p, true, false)
	if errno != 0 {
		return errno
	}
	defer e.close()
	if !e.exists() {
		return sys.ENOENT
	}
	// os.Root acts on a symbolic link swapped in meanwhile, not its target.
	return sys.UnwrapOSError(e.dir.Chtimes(e.name, nanosToTime(atim), nanosToTime(mtim)))
}

// nanosToTime converts a sys.Utimens time; UTIME_OMIT is the zero Time,
// which os leaves unchanged.
func nanosToTime(ns int64) time.Time {
	if ns == sys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Unlink implements sys.FS: it removes a file or a symbolic link, never a
// directory (EISDIR).
func (w *workspaceFS) Unlink(p string) sys.Errno {
	e, errno := w.change(p, false, false)
	if errno != 0 {
		return errno
	}
	defer e.close()
	switch {
	case !e.exists():
		return sys.ENOENT
	case e.info.IsDir():
		return sys.EISDIR
	}
	return sys.UnwrapOSError(e.dir.Remove(e.name))
}

// Rmdir implements sys.FS: it removes an empty directory, never a file
// or a symbolic link (ENOTDIR).
func (w *workspaceFS) Rmdir(p string) sys.Errno {
	e, errno := w.change(p, false, false)
	if errno != 0 {
		return errno
	}
	defer e.close()
	switch {
	case !e.exists():
		return sys.ENOENT
	case e.rel == ".":
		return sys.EINVAL
	case !e.info.IsDir():
		return sys.ENOTDIR
	}
	return sys.UnwrapOSError(e.dir.Remove(e.name))
}

// Symlink implements sys.FS. The target must stay inside the workspace
// and out of hidden paths, judged from the link's directory: an absolute
// target, one that climbs out, or one naming a hidden path is EPERM.
// (A target that only reaches a hidden path through other links is
// refused when followed.)
func (w *workspaceFS) Symlink(target, link string) sys.Errno {
	e, errno := w.change(link, false, true)
	if errno != 0 {
		return errno
	}
	defer e.close()
	if e.exists() {
		return sys.EEXIST
	}
	var dir []string
	if parent := e.parentRel(); parent != "." {
		dir = strings.Split(parent, "/")
	}
	elems, errno := linkElems(dir, target)
	switch {
	case errno == sys.ENOENT:
		return sys.EINVAL // empty target
	case errno != 0:
		return errno
	case w.hiddenPath(strings.Join(elems, "/")):
		return sys.EPERM
	}
	return sys.UnwrapOSError(e.dir.Symlink(target, e.name))
}

// Link implements sys.FS: a hard link to a file or symbolic link (not
// followed). A hidden source is ENOENT, a hidden destination EPERM.
func (w *workspaceFS) Link(oldPath, newPath string) sys.Errno {
	from, to, errno := w.changePair(oldPath, newPath)
	if errno != 0 {
		return errno
	}
	defer from.close()
	defer to.close()
	switch {
	case to.exists():
		return sys.EEXIST
	case from.info.IsDir():
		return sys.EPERM
	case from.parentRel() == to.parentRel():
		return sys.UnwrapOSError(from.dir.Link(from.name, to.name))
	}
	return linkAt(from.dir, from.name, to.dir, to.name)
}

// Rename implements sys.FS: it moves the entry itself, never a symbolic
// link's target. A hidden source is ENOENT, a hidden destination EPERM,
// and so is moving a directory that would bring a hidden path into view
// (a path hidden under the old name but not under the new one).
func (w *workspaceFS) Rename(from, to string) sys.Errno {
	src, dst, errno := w.changePair(from, to)
	if errno != 0 {
		return errno
	}
	defer src.close()
	defer dst.close()
	switch {
	case src.rel == "." || dst.rel == ".":
		return sys.EINVAL
	case src.rel == dst.rel:
		return 0
	}
	if src.info.IsDir() {
		if errno := w.checkReveals(src, dst.rel); errno != 0 {
			return errno
		}
	}
	if src.parentRel() == dst.parentRel() {
		return sys.UnwrapOSError(src.dir.Rename(src.name, dst.name))
	}
	return renameAt(src.dir, src.name, dst.dir, dst.name)
}

// changePair resolves the two ends of a link or rename, neither followed:
// src must exist; dst may be created. On success the caller closes both.
func (w *workspaceFS) changePair(from, to string) (src, dst entry, errno sys.Errno) {
	if src, errno = w.change(from, false, false); errno != 0 {
		return entry{}, entry{}, errno
	}
	if !src.exists() {
		src.close()
		return entry{}, entry{}, sys.ENOENT
	}
	if dst, errno = w.change(to, false, true); errno != 0 {
		src.close()
		return entry{}, entry{}, errno
	}
	return src, dst, 0
}

// checkReveals refuses (EPERM) to move the directory src to newRel when
// something inside is hidden at its old path but not at its new one. It
// walks what is visible under src and does not enter what is hidden under
// the new name.
func (w *workspaceFS) checkReveals(src entry, newRel string) sys.Errno {
	if w.hide == nil {
		return 0
	}
	dir, errno := openSameDir(src.dir, src.name, src.info)
	if errno != 0 {
		return errno
	}
	defer dir.Close()
	return w.revealsUnder(dir, src.rel, newRel)
}

func (w *workspaceFS) revealsUnder(dir *os.Root, oldRel, newRel string) sys.Errno {
	d, err := dir.Open(".")
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	infos, err := d.Readdir(-1)
	_ = d.Close()
	if err != nil {
		return sys.UnwrapOSError(err)
	}
	for _, info := range infos {
		o, n := path.Join(oldRel, info.Name()), path.Join(newRel, info.Name())
		switch {
		case w.hidden(n): // all below stays hidden
			continue
		case w.hidden(o):
			return sys.EPERM
		case !info.IsDir():
			continue
		}
		sub, errno := openSameDir(dir, info.Name(), info)
		if errno != 0 {
			return errno
		}
		errno = w.revealsUnder(sub, o, n)
		_ = sub.Close()
		if errno != 0 {
			return errno
		}
	}
	return 0
}

var _ sys.FS = (*workspaceFS)(nil)
