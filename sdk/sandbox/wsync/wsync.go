// Package wsync keeps a remote copy of a workspace in step with the host,
// for sandbox backends whose commands run somewhere else (ssh, daytona,
// vercel-sandbox, modal).
//
// The host stays the source of truth: checkpoints, rewind and the file
// tools all work on it. Before each command a backend pushes what changed
// on the host since the last sync (Plan, then the tar stream and the shell
// script that applies it remotely); after the command it pulls the remote
// copy back (PullScript remotely, Pull here), writing what changed and
// deleting what the command deleted. Both directions move tar streams
// through any pipe the backend has: ssh, a vendor CLI's stdin/stdout.
//
// Denied paths (the policy's names and globs, matched against every path
// component) never leave the host and are never written back. A pulled
// stream cannot write outside the workspace: absolute names, names with
// "..", entries below a symlink that leads out, and symlinks that point
// out are skipped.
package wsync

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// entry is what the mirror knows about one path: enough to tell a change.
type entry struct {
	dir   bool
	size  int64
	mtime time.Time
	mode  fs.FileMode
	link  string
}

// Mirror tracks a host workspace and what was last synced. It is not safe
// for concurrent use; a backend serialises the syncs of a session.
type Mirror struct {
	root string
	deny []string
	// synced is the host state as of the last completed sync, keyed by
	// slash-separated relative path; nil before the first push.
	synced map[string]entry
}

// New returns a mirror of root, never copying paths that match deny.
func New(root string, deny []string) *Mirror {
	return &Mirror{root: filepath.Clean(root), deny: slices.Clone(deny)}
}

// Root is the host workspace.
func (m *Mirror) Root() string { return m.root }

// Denied reports whether the slash-separated relative path rel is never
// synced.
func (m *Mirror) Denied(rel string) bool { return sandbox.Denied(m.deny, rel) }

// Plan is one push: what changed on the host since the last sync.
type Plan struct {
	m *Mirror
	// Full is set on the first push: the remote directory is populated
	// from nothing.
	Full bool
	// Changed are the new or changed paths, in walk order (a directory
	// before what it holds).
	Changed []string
	// Deleted are paths synced before that are gone from the host.
	Deleted []string
	next    map[string]entry
}

// Plan compares the host workspace with the last sync.
func (m *Mirror) Plan() (*Plan, error) {
	now, order, err := m.scan()
	if err != nil {
		return nil, err
	}
	p := &Plan{m: m, Full: m.synced == nil, next: now}
	for _, rel := range order {
		if old, ok := m.synced[rel]; !ok || old != now[rel] {
			p.Changed = append(p.Changed, rel)
		}
	}
	for rel, old := range m.synced {
		cur, ok := now[rel]
		switch {
		case !ok && !coveredBy(rel, m.synced, now):
			p.Deleted = append(p.Deleted, rel)
		case ok && (old.dir != cur.dir || (old.link == "") != (cur.link == "")):
			p.Deleted = append(p.Deleted, rel) // the type changed: clear the way
		}
	}
	slices.Sort(p.Deleted)
	return p, nil
}

// coveredBy reports whether a parent directory of rel is deleted too, so
// deleting the parent removes rel.
func coveredBy(rel string, before, now map[string]entry) bool {
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if _, ok := now[dir]; !ok && before[dir].dir {
			return true
		}
	}
	return false
}

// Empty reports whether there is nothing to push.
func (p *Plan) Empty() bool { return !p.Full && len(p.Changed) == 0 && len(p.Deleted) == 0 }

// WriteTar writes the changed paths as a tar stream. A file that vanished
// since Plan is left out; the next push deletes it remotely.
func (p *Plan) WriteTar(w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, rel := range p.Changed {
		e := p.next[rel]
		src := filepath.Join(p.m.root, filepath.FromSlash(rel))
		h := &tar.Header{Name: rel, Mode: int64(e.mode.Perm()), ModTime: e.mtime, Format: tar.FormatPAX}
		switch {
		case e.dir:
			h.Typeflag, h.Name = tar.TypeDir, rel+"/"
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, e.size
		}
		if h.Typeflag != tar.TypeReg {
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		f, err := os.Open(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wsync: push %s: %w", rel, err)
		}
		err = copyFile(tw, h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("wsync: push %s: %w", rel, err)
		}
	}
	return tw.Close()
}

// copyFile writes f under h; a file that changed size since Plan is sent
// as it was planned (cut or zero-padded) and resent by the next push.
func copyFile(tw *tar.Writer, h *tar.Header, f *os.File) error {
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, h.Size))
	if err != nil {
		return err
	}
	if n < h.Size {
		_, err = io.CopyN(tw, zeros{}, h.Size-n)
	}
	return err
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Script is the POSIX shell script that applies the push in dir on the
// remote side, reading WriteTar's stream on its stdin: deleted paths are
// removed first (a file may become a directory), then the stream is
// extracted. A first push empties dir first, so nothing stale survives.
func (p *Plan) Script(dir string) string {
	var b strings.Builder
	// umask 0: tar applies the umask to the recorded modes when not
	// run as root, and a round trip must not change them.
	fmt.Fprintf(&b, "set -e; mkdir -p %s; cd %s; umask 0; ", Quote(dir), Quote(dir))
	if p.Full {
		b.WriteString("find . -mindepth 1 -maxdepth 1 -exec rm -rf {} +; ")
	}
	if len(p.Deleted) > 0 {
		b.WriteString("rm -rf --")
		for _, rel := range p.Deleted {
			b.WriteString(" ")
			b.WriteString(Quote("./" + rel))
		}
		b.WriteString("; ")
	}
	b.WriteString("tar -xf -")
	return b.String()
}

// Done records the push as applied remotely. Call it only once the
// remote script succeeded; a failed push is planned again in full detail
// next time.
func (p *Plan) Done() { p.m.synced = p.next }

// trailer follows a complete archive on the pull stream: a stream cut
// short between two entries reads as a whole (smaller) archive, and Pull
// would delete on the host every file it did not see.
const trailer = "sparrow-wsync-complete\n"

// PullScript is the POSIX shell script that writes the remote copy in dir
// to stdout as a tar stream, followed by a completeness trailer, for Pull.
func PullScript(dir string) string {
	return fmt.Sprintf("cd %s && tar -cf - . && echo %s", Quote(dir), strings.TrimSuffix(trailer, "\n"))
}

// ErrIncomplete is a pull stream that ended before the archive's end and
// PullScript's trailer; Pull then deletes nothing.
var ErrIncomplete = errors.New("wsync: pull: the remote stream ended early; nothing was deleted")

// Changes says what a pull wrote on the host.
type Changes struct {
	// Written are the files and symlinks created or changed.
	Written []string
	// Removed are the paths deleted because the command deleted them.
	Removed []string
	// Skipped are entries never written: denied, or leading out of the
	// workspace.
	Skipped []string
}

// Pull reads the remote copy's tar stream and makes the host workspace
// match it: changed files are written (unchanged ones are left alone, so
// their modification times stay), and paths synced before that are gone
// remotely are deleted. Denied paths are never touched. On error the host
// may hold part of the remote's changes; the next push resends what
// differs.
func (m *Mirror) Pull(r io.Reader) (Changes, error) {
	var ch Changes
	seen := map[string]bool{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ch, fmt.Errorf("wsync: pull: read the remote stream: %w", err)
		}
		rel := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if rel == "." || rel == "" {
			continue
		}
		// A skipped entry still exists remotely: it is marked seen, so
		// the host's own copy (a symlink leading out) is never deleted.
		if path.IsAbs(h.Name) || rel == ".." || strings.HasPrefix(rel, "../") || m.Denied(rel) {
			ch.Skipped = append(ch.Skipped, h.Name)
			continue
		}
		dst := filepath.Join(m.root, filepath.FromSlash(rel))
		if !insideReal(m.root, filepath.Dir(dst)) {
			seen[rel] = true
			ch.Skipped = append(ch.Skipped, h.Name)
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			seen[rel] = true
			if fi, err := os.Lstat(dst); err == nil && !fi.IsDir() {
				_ = os.Remove(dst)
			}
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return ch, fmt.Errorf("wsync: pull %s: %w", rel, err)
			}
		case tar.TypeReg:
			seen[rel] = true
			wrote, err := writeFile(dst, tr, h)
			if err != nil {
				return ch, fmt.Errorf("wsync: pull %s: %w", rel, err)
			}
			if wrote {
				ch.Written = append(ch.Written, rel)
			}
		case tar.TypeSymlink:
			target := path.Join(path.Dir(rel), h.Linkname)
			seen[rel] = true
			if path.IsAbs(h.Linkname) || target == ".." || strings.HasPrefix(target, "../") {
				ch.Skipped = append(ch.Skipped, h.Name)
				continue
			}
			if cur, err := os.Readlink(dst); err == nil && cur == h.Linkname {
				continue
			}
			_ = os.RemoveAll(dst)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return ch, fmt.Errorf("wsync: pull %s: %w", rel, err)
			}
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return ch, fmt.Errorf("wsync: pull %s: %w", rel, err)
			}
			ch.Written = append(ch.Written, rel)
		default:
			seen[rel] = true
			ch.Skipped = append(ch.Skipped, h.Name) // devices, fifos, hard links
		}
	}
	// After the archive's end: block padding, then the trailer.
	rest, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil || !bytes.HasPrefix(bytes.TrimLeft(rest, "\x00"), []byte(trailer)) {
		return ch, ErrIncomplete
	}
	// Deepest first, so a directory is empty by the time it is removed.
	gone := make([]string, 0)
	for rel := range m.synced {
		if !seen[rel] && !m.Denied(rel) {
			gone = append(gone, rel)
		}
	}
	slices.SortFunc(gone, func(a, b string) int { return strings.Compare(b, a) })
	for _, rel := range gone {
		p := filepath.Join(m.root, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			if os.Remove(p) == nil { // only when empty: never a host-only file
				ch.Removed = append(ch.Removed, rel)
			}
			continue
		}
		if os.Remove(p) == nil {
			ch.Removed = append(ch.Removed, rel)
		}
	}
	// Synced is what both sides hold now: a file that appeared on the
	// host meanwhile (an editor, the user) is not on the remote, so the
	// next push must send it and the next pull must not delete it.
	now, _, err := m.scan()
	if err != nil {
		return ch, err
	}
	for rel := range now {
		if !seen[rel] {
			delete(now, rel)
		}
	}
	m.synced = now
	return ch, nil
}

// writeFile writes a regular file unless it already holds these bytes,
// keeping the remote modification time. wrote is false when nothing
// changed.
func writeFile(dst string, r io.Reader, h *tar.Header) (wrote bool, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return false, err
	}
	mode := fs.FileMode(h.Mode) & 0o777
	if fi, err := os.Lstat(dst); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if cur, err := os.ReadFile(dst); err == nil && bytes.Equal(cur, data) {
			if fi.Mode().Perm() != mode {
				return true, os.Chmod(dst, mode)
			}
			return false, nil
		}
	} else if err == nil {
		_ = os.RemoveAll(dst) // a symlink or directory becomes a file
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, err
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return false, err
	}
	// WriteFile keeps an existing file's mode; the remote's wins.
	if err := os.Chmod(dst, mode); err != nil {
		return false, err
	}
	if !h.ModTime.IsZero() {
		_ = os.Chtimes(dst, h.ModTime, h.ModTime)
	}
	return true, nil
}

// scan walks the host workspace, minus denied paths, returning each
// path's state and the walk order.
func (m *Mirror) scan() (map[string]entry, []string, error) {
	now := map[string]entry{}
	var order []string
	err := filepath.WalkDir(m.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != m.root && errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		rel, _ := filepath.Rel(m.root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if m.Denied(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		var e entry
		switch {
		case fi.IsDir():
			e = entry{dir: true, mode: fi.Mode().Perm()}
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e = entry{link: link}
		case fi.Mode().IsRegular():
			e = entry{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode().Perm()}
		default:
			return nil // sockets, fifos, devices stay home
		}
		now[rel] = e
		order = append(order, rel)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("wsync: scan %s: %w", m.root, err)
	}
	return now, order, nil
}

// insideReal reports whether dir, with symlinks resolved as far as it
// exists, is root or below it.
func insideReal(root, dir string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	for p := dir; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			rel, err := filepath.Rel(realRoot, r)
			return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

// Quote quotes s for a POSIX shell.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
