package wasmtool

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// maxSymlinks is how many symbolic links one path may pass through, as
// Linux's MAXSYMLINKS; one more is ELOOP.
const maxSymlinks = 40

// maxPathLen bounds a guest path, as Linux's PATH_MAX: walk costs a few
// system calls per element, and a host call cannot be interrupted.
const maxPathLen = 4096

// entry is a workspace path resolved by walk: the directory that holds its
// last element, opened without following any symbolic link of the
// caller's choosing, and what Lstat saw there.
type entry struct {
	// dir holds name. It is the workspace root or, when owned, a directory
	// under it that the entry must close.
	dir   *os.Root
	owned bool
	// name is the last element, "." for the workspace itself.
	name string
	// rel is the canonical workspace-relative path: no symbolic links,
	// no "." or ".." elements; "." for the workspace itself.
	rel string
	// info is the Lstat of name in dir, nil when nothing is there.
	info fs.FileInfo
	// mustDir reports that the path ended in a slash.
	mustDir bool
}

// close releases the entry's directory handle.
func (e *entry) close() {
	if e.owned {
		_ = e.dir.Close()
	}
}

// exists reports whether something is at the entry.
func (e *entry) exists() bool { return e.info != nil }

// isSymlink reports whether the entry is a symbolic link (not followed).
func (e *entry) isSymlink() bool { return e.info != nil && e.info.Mode()&fs.ModeSymlink != 0 }

// parentRel is the canonical path of the directory holding the entry.
func (e *entry) parentRel() string { return path.Dir(e.rel) }

// splitRel cleans a path the guest gave and splits it into elements. The
// path is relative to the workspace; an absolute path or one that climbs
// out of the workspace is EPERM, as wazero's own path checks answer, and
// one longer than maxPathLen is ENAMETOOLONG. The workspace itself has no
// elements.
func splitRel(p string) (elems []string, mustDir bool, errno sys.Errno) {
	switch {
	case len(p) > maxPathLen:
		return nil, false, sys.ENAMETOOLONG
	case strings.HasPrefix(p, "/"):
		return nil, false, sys.EPERM
	}
	mustDir = strings.HasSuffix(p, "/")
	c := path.Clean(p)
	switch {
	case c == ".":
		return nil, mustDir, 0
	case c == ".." || strings.HasPrefix(c, "../"):
		return nil, false, sys.EPERM
	}
	return strings.Split(c, "/"), mustDir, 0
}

// linkElems resolves a symbolic link's target against the canonical
// elements of the directory holding the link. An absolute target, an
// empty one, or one that climbs out of the workspace is refused: the
// first two are EPERM and ENOENT as wasi-filesystem and POSIX answer, the
// last EPERM.
func linkElems(dir []string, target string) ([]string, sys.Errno) {
	switch {
	case target == "":
		return nil, sys.ENOENT
	case path.IsAbs(target):
		return nil, sys.EPERM
	}
	c := path.Join(strings.Join(dir, "/"), target)
	switch {
	case c == ".":
		return nil, 0
	case c == ".." || strings.HasPrefix(c, "../"):
		return nil, sys.EPERM
	}
	return strings.Split(c, "/"), 0
}

// walkError is why walk failed. hiddenLast tells callers that create
// something that the last element is hidden (they answer EPERM), as
// opposed to a directory on the way (ENOENT, like any missing parent).
type walkError struct {
	errno      sys.Errno
	hiddenLast bool
}

// walk resolves a guest path to an entry. It follows symbolic links
// itself, one element at a time, with each directory held open as an
// *os.Root, so that:
//   - no path, link target or link chain leaves the workspace: an
//     absolute target or one that climbs above the workspace is EPERM,
//     and os.Root refuses the rest even if a link is swapped in later;
//   - every element on the way, and every element of every link target,
//     is checked against hidden as a canonical workspace-relative path
//     before it is looked at; a hidden one is ENOENT;
//   - a directory is entered only if the handle opened is the directory
//     Lstat saw (same device and inode), so a directory swapped for a
//     symbolic link between the two is ENOENT, not followed.
//
// follow says whether a symbolic link in the last element is followed;
// links before it always are. The caller must close the entry.
func (w *workspaceFS) walk(p string, follow bool) (entry, *walkError) {
	elems, mustDir, errno := splitRel(p)
	if errno != 0 {
		return entry{}, &walkError{errno: errno}
	}
	e := entry{dir: w.root, name: ".", rel: ".", mustDir: mustDir}
	var done []string // canonical elements of e.dir
	links := 0
	restart := func() {
		e.close()
		e.dir, e.owned, done = w.root, false, nil
	}
	fail := func(errno sys.Errno, hiddenLast bool) (entry, *walkError) {
		e.close()
		return entry{}, &walkError{errno: errno, hiddenLast: hiddenLast}
	}
	for {
		if len(elems) == 0 { // the workspace itself
			info, err := w.root.Lstat(".")
			if err != nil {
				return fail(sys.UnwrapOSError(err), false)
			}
			e.name, e.rel, e.info = ".", ".", info
			return e, nil
		}
		name, last := elems[0], len(elems) == 1
		rel := strings.Join(append(done[:len(done):len(done)], name), "/")
		if w.hidden(rel) {
			return fail(sys.ENOENT, last)
		}
		info, err := e.dir.Lstat(name)
		switch {
		case err != nil && last && errors.Is(err, fs.ErrNotExist):
			e.name, e.rel, e.info = name, rel, nil
			return e, nil
		case err != nil:
			return fail(sys.UnwrapOSError(err), false)
		}
		if info.Mode()&fs.ModeSymlink != 0 && (!last || follow) {
			if links++; links > maxSymlinks {
				return fail(sys.ELOOP, false)
			}
			target, err := e.dir.Readlink(name)
			if err != nil {
				return fail(sys.UnwrapOSError(err), false)
			}
			next, errno := linkElems(done, target)
			if errno != 0 {
				return fail(errno, false)
			}
			if last && strings.HasSuffix(target, "/") {
				mustDir = true
				e.mustDir = true
			}
			elems = append(next, elems[1:]...)
			restart()
			continue
		}
		if last {
			if mustDir && !info.IsDir() {
				return fail(sys.ENOTDIR, false)
			}
			e.name, e.rel, e.info = name, rel, info
			return e, nil
		}
		if !info.IsDir() {
			return fail(sys.ENOTDIR, false)
		}
		sub, errno := openSameDir(e.dir, name, info)
		if errno != 0 {
			return fail(errno, false)
		}
		e.close()
		e.dir, e.owned = sub, true
		done = append(done, name)
		elems = elems[1:]
	}
}

// openSameDir opens the directory name in dir and checks that it is the
// one Lstat saw. os.Root follows a symbolic link swapped in meanwhile,
// though never out of dir; the check refuses it with ENOENT.
func openSameDir(dir *os.Root, name string, want fs.FileInfo) (*os.Root, sys.Errno) {
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, sys.UnwrapOSError(err)
	}
	got, err := sub.Stat(".")
	if err != nil || !os.SameFile(want, got) {
		_ = sub.Close()
		return nil, sys.ENOENT
	}
	return sub, 0
}

// hidden reports whether a canonical relative path is hidden from the
// guest. The workspace itself never is.
func (w *workspaceFS) hidden(rel string) bool {
	return w.hide != nil && rel != "." && w.hide(rel)
}

// hiddenPath reports whether rel or any directory above it is hidden.
func (w *workspaceFS) hiddenPath(rel string) bool {
	if w.hide == nil || rel == "." {
		return false
	}
	for i := 0; i <= len(rel); i++ {
		if (i == len(rel) || rel[i] == '/') && w.hide(rel[:i]) {
			return true
		}
	}
	return false
}
