//go:build unix

package wasmtool

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero/experimental/sys"
)

// openTestFS opens the workspace of l as the guest would see it.
func openTestFS(t testing.TB, l fsLayout, writable bool) *workspaceFS {
	t.Helper()
	w, err := openWorkspace(l.ws, writable, hideDefault)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// readAll opens p read-only in w and reads it whole.
func readAll(w *workspaceFS, p string) (string, sys.Errno) {
	f, errno := w.OpenFile(p, sys.O_RDONLY, 0)
	if errno != 0 {
		return "", errno
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 64)
	for {
		n, errno := f.Read(buf)
		out = append(out, buf[:n]...)
		if errno != 0 {
			return "", errno
		}
		if n == 0 {
			return string(out), 0
		}
	}
}

// TestWorkspaceFSSwapRace swaps symbolic links in and out under paths
// the file system is resolving, the way a concurrent writer could, and
// checks that no read or write ever reaches a hidden file or one outside.
func TestWorkspaceFSSwapRace(t *testing.T) {
	l := newLayout(t)
	ws := l.ws
	for name, body := range map[string]string{"dreal/f": "ok", ".git/f": "SECRET", "k.file": "ok"} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(l.parent, "outdir2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.parent, "outdir2/f"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := openTestFS(t, l, true)

	// The swapper flips k between a regular file and links to a hidden
	// file and to a file outside (each an atomic rename), and d between
	// a real directory and links to a hidden and an outside directory.
	var stop atomic.Bool
	var wg sync.WaitGroup
	swap := func(name, target string) {
		tmp := filepath.Join(ws, name+".tmp")
		_ = os.Remove(tmp)
		if target == "" {
			_ = os.WriteFile(tmp, []byte("ok"), 0o644)
		} else {
			_ = os.Symlink(target, tmp)
		}
		_ = os.Rename(tmp, filepath.Join(ws, name))
	}
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			swap("k", []string{"", ".env", "", "../outside.txt"}[i%4])
		}
	})
	wg.Go(func() {
		d, dreal := filepath.Join(ws, "d"), filepath.Join(ws, "dreal")
		for i := 0; !stop.Load(); i++ {
			_ = os.Rename(dreal, d) // a real directory
			_ = os.Rename(d, dreal)
			_ = os.Symlink([]string{".git", "../outdir2"}[i%2], d)
			time.Sleep(time.Microsecond)
			_ = os.Remove(d)
		}
	})

	var reads, writes int
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		for _, p := range []string{"k", "d/f"} {
			got, errno := readAll(w, p)
			if errno == 0 {
				reads++
				if got != "ok" {
					t.Errorf("read %s = %q during a swap", p, got)
				}
			}
		}
		if f, errno := w.OpenFile("k", sys.O_WRONLY|sys.O_TRUNC|sys.O_CREAT, 0o644); errno == 0 {
			writes++
			_, _ = f.Write([]byte("ok"))
			f.Close()
		}
		if f, errno := w.OpenFile("d/f", sys.O_WRONLY|sys.O_TRUNC, 0); errno == 0 {
			writes++
			_, _ = f.Write([]byte("ok"))
			f.Close()
		}
	}
	stop.Store(true)
	wg.Wait()
	if reads == 0 || writes == 0 {
		t.Errorf("%d reads and %d writes succeeded; the test proved nothing", reads, writes)
	}
	t.Logf("%d reads, %d writes", reads, writes)
	assertHiddenIntact(t, l)
	for p, want := range map[string]string{filepath.Join(ws, ".git/f"): "SECRET", filepath.Join(l.parent, "outdir2/f"): "OUTSIDE"} {
		if got := readHost(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

// TestWorkspaceFSOpen covers open flags a Go guest rarely sends.
func TestWorkspaceFSOpen(t *testing.T) {
	tests := []struct {
		name     string
		writable bool
		path     string
		flag     sys.Oflag
		want     sys.Errno
		// host is what hello.txt holds afterwards.
		host string
	}{
		{"read", false, "hello.txt", sys.O_RDONLY, 0, "hello"},
		{"read through link", false, "inlink", sys.O_RDONLY, 0, "hello"},
		{"nofollow on a link", false, "inlink", sys.O_RDONLY | sys.O_NOFOLLOW, sys.ELOOP, "hello"},
		{"directory flag on a file", false, "hello.txt", sys.O_RDONLY | sys.O_DIRECTORY, sys.ENOTDIR, "hello"},
		{"directory through link", false, "sublink", sys.O_RDONLY | sys.O_DIRECTORY, 0, "hello"},
		{"create a directory", true, "newdir", sys.O_CREAT | sys.O_DIRECTORY, sys.EINVAL, "hello"},
		{"directory for writing", true, "sub", sys.O_RDWR, sys.EISDIR, "hello"},
		{"directory for writing, read-only", false, "sub", sys.O_WRONLY | sys.O_DIRECTORY, sys.EISDIR, "hello"},
		{"file for writing, read-only", false, "hello.txt", sys.O_RDWR, sys.EROFS, "hello"},
		{"truncate, read-only", false, "hello.txt", sys.O_RDONLY | sys.O_TRUNC, sys.EROFS, "hello"},
		{"create existing, read-only", false, "hello.txt", sys.O_RDONLY | sys.O_CREAT, 0, "hello"},
		{"create missing, read-only", false, "new.txt", sys.O_RDONLY | sys.O_CREAT, sys.EROFS, "hello"},
		{"read-only truncate", true, "hello.txt", sys.O_RDONLY | sys.O_TRUNC, 0, ""},
		{"truncate through link", true, "inlink", sys.O_WRONLY | sys.O_TRUNC, 0, ""},
		{"exclusive on a link", true, "inlink", sys.O_WRONLY | sys.O_CREAT | sys.O_EXCL, sys.EEXIST, "hello"},
		{"exclusive on a hidden file", true, ".env", sys.O_WRONLY | sys.O_CREAT | sys.O_EXCL, sys.EPERM, "hello"},
		{"dot-dot", false, "../outside.txt", sys.O_RDONLY, sys.EPERM, "hello"},
		{"absolute", false, "/etc/passwd", sys.O_RDONLY, sys.EPERM, "hello"},
		{"trailing slash on a file", false, "hello.txt/", sys.O_RDONLY, sys.ENOTDIR, "hello"},
		{"missing", false, "nope", sys.O_RDONLY, sys.ENOENT, "hello"},
		{"too long", false, strings.Repeat("sub/", 1025) + "file.txt", sys.O_RDONLY, sys.ENAMETOOLONG, "hello"},
		{"missing parent", true, "nope/x", sys.O_WRONLY | sys.O_CREAT, sys.ENOENT, "hello"},
		{"file as a parent", true, "hello.txt/x", sys.O_WRONLY | sys.O_CREAT, sys.ENOTDIR, "hello"},
		{"fifo", false, "fifo", sys.O_RDONLY, sys.ENOTSUP, "hello"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			if err := syscall.Mkfifo(filepath.Join(l.ws, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			w := openTestFS(t, l, tc.writable)
			f, errno := w.OpenFile(tc.path, tc.flag, 0o644)
			if errno != tc.want {
				t.Errorf("OpenFile(%q, %#x) = %v, want %v", tc.path, tc.flag, errno, tc.want)
			}
			if f != nil {
				f.Close()
			}
			if got := readHost(t, filepath.Join(l.ws, "hello.txt")); got != tc.host {
				t.Errorf("hello.txt = %q, want %q", got, tc.host)
			}
			assertAbsent(t, filepath.Join(l.ws, "new.txt"), filepath.Join(l.ws, "newdir"))
		})
	}
}

// A dangling link is followed to create its target, inside only.
func TestWorkspaceFSCreateThroughDanglingLink(t *testing.T) {
	l := newLayout(t)
	for name, target := range map[string]string{"dangling": "sub/made.txt", "danglingout": "../made.txt"} {
		if err := os.Symlink(target, filepath.Join(l.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	w := openTestFS(t, l, true)
	f, errno := w.OpenFile("dangling", sys.O_WRONLY|sys.O_CREAT, 0o600)
	if errno != 0 {
		t.Fatalf("create through dangling = %v", errno)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(l.ws, "sub/made.txt")); err != nil {
		t.Error(err)
	}
	if _, errno := w.OpenFile("danglingout", sys.O_WRONLY|sys.O_CREAT, 0o600); errno != sys.EPERM {
		t.Errorf("create through danglingout = %v, want EPERM", errno)
	}
	assertAbsent(t, filepath.Join(l.parent, "made.txt"))
}

// Chmod is not in WASI preview 1, so only the file system can be asked.
func TestWorkspaceFSChmod(t *testing.T) {
	tests := []struct {
		name     string
		writable bool
		path     string
		want     sys.Errno
		mode     fs.FileMode // of hello.txt afterwards
	}{
		{"read-only", false, "hello.txt", sys.EROFS, 0o644},
		{"writable", true, "hello.txt", 0, 0o600},
		{"through a link", true, "inlink", 0, 0o600},
		{"hidden", true, ".env", sys.ENOENT, 0o644},
		{"outside", true, "up", sys.EPERM, 0o644},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			w := openTestFS(t, l, tc.writable)
			if errno := w.Chmod(tc.path, 0o600|fs.ModeSetuid); errno != tc.want {
				t.Errorf("Chmod = %v, want %v", errno, tc.want)
			}
			fi, err := os.Stat(filepath.Join(l.ws, "hello.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tc.mode {
				t.Errorf("hello.txt mode = %v, want %v", fi.Mode(), tc.mode)
			}
			for _, p := range []string{filepath.Join(l.ws, ".env"), filepath.Join(l.parent, "outside.txt")} {
				if fi, err := os.Stat(p); err != nil || fi.Mode() != 0o644 {
					t.Errorf("%s mode = %v, %v", p, fi.Mode(), err)
				}
			}
		})
	}
}

// Readdir in small batches leaves out hidden entries without ending
// early, reports host inodes, and starts over after a rewind.
func TestWorkspaceFSReaddir(t *testing.T) {
	l := newLayout(t)
	w := openTestFS(t, l, false)
	f, errno := w.OpenFile(".", sys.O_RDONLY|sys.O_DIRECTORY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	readAllDirents := func() []string {
		var names []string
		for {
			batch, errno := f.Readdir(2)
			if errno != 0 {
				t.Fatal(errno)
			}
			for _, d := range batch {
				fi, err := os.Lstat(filepath.Join(l.ws, d.Name))
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				if uint64(d.Ino) != uint64(st.Ino) || d.Type != fi.Mode().Type() {
					t.Errorf("%s: ino %d type %v, want %d %v", d.Name, d.Ino, d.Type, st.Ino, fi.Mode().Type())
				}
				names = append(names, d.Name)
			}
			if len(batch) < 2 {
				slices.Sort(names)
				return names
			}
		}
	}
	want := []string{"abs", "absdir", "chain1", "chain2", "chainin", "dotlink", "empty", "envlink", "gitlink",
		"hello.txt", "inlink", "loop", "sub", "subenvlink", "sublink", "up", "updir"}
	if diff := cmp.Diff(want, readAllDirents()); diff != "" {
		t.Errorf("first listing (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(l.ws, "late.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errno := f.Seek(0, io.SeekStart); errno != 0 {
		t.Fatalf("rewind: %v", errno)
	}
	want = append(want, "late.txt")
	slices.Sort(want)
	if diff := cmp.Diff(want, readAllDirents()); diff != "" {
		t.Errorf("after rewind (-want +got):\n%s", diff)
	}
	if _, errno := f.Seek(1, io.SeekStart); errno != sys.EISDIR {
		t.Errorf("seek 1 on a directory = %v, want EISDIR", errno)
	}
	if _, errno := f.Read(make([]byte, 1)); errno != sys.EISDIR {
		t.Errorf("read of a directory = %v, want EISDIR", errno)
	}
}

// File operations a read-only workspace refuses, and those a writable
// one does, on an open file.
func TestWorkspaceFSFile(t *testing.T) {
	type step struct {
		name string
		do   func(f sys.File) sys.Errno
	}
	write := step{"write", func(f sys.File) sys.Errno { _, e := f.Write([]byte("X")); return e }}
	pwrite := step{"pwrite", func(f sys.File) sys.Errno { _, e := f.Pwrite([]byte("Y"), 1); return e }}
	truncate := step{"truncate", func(f sys.File) sys.Errno { return f.Truncate(3) }}
	sync := step{"sync", func(f sys.File) sys.Errno { return f.Sync() }}
	utimens := step{"utimens", func(f sys.File) sys.Errno {
		return f.Utimens(sys.UTIME_OMIT, time.Date(2001, 2, 3, 0, 0, 0, 0, time.UTC).UnixNano())
	}}
	appendOn := step{"append on", func(f sys.File) sys.Errno { return f.SetAppend(true) }}
	tests := []struct {
		name     string
		writable bool
		flag     sys.Oflag
		steps    []step
		want     []sys.Errno
		host     string
	}{
		{"read-only", false, sys.O_RDONLY, []step{write, pwrite, truncate, sync, utimens},
			[]sys.Errno{sys.EBADF, sys.EBADF, sys.EBADF, sys.EBADF, sys.EBADF}, "hello"},
		{"writable", true, sys.O_RDWR, []step{write, pwrite, truncate, sync, utimens},
			[]sys.Errno{0, 0, 0, 0, 0}, "XYl"},
		{"append", true, sys.O_WRONLY | sys.O_APPEND, []step{write, pwrite}, []sys.Errno{0, sys.EINVAL}, "helloX"},
		{"set append", true, sys.O_WRONLY, []step{appendOn, write}, []sys.Errno{0, 0}, "helloX"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayout(t)
			w := openTestFS(t, l, tc.writable)
			f, errno := w.OpenFile("hello.txt", tc.flag, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			var got []sys.Errno
			var names []string
			for _, s := range tc.steps {
				got = append(got, s.do(f))
				names = append(names, s.name)
			}
			if errno := f.Close(); errno != 0 {
				t.Fatal(errno)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results of %v (-want +got):\n%s", names, diff)
			}
			p := filepath.Join(l.ws, "hello.txt")
			if got := readHost(t, p); got != tc.host {
				t.Errorf("hello.txt = %q, want %q", got, tc.host)
			}
			if fi, err := os.Stat(p); err == nil && slices.ContainsFunc(tc.steps, func(s step) bool { return s.name == "utimens" }) {
				wantYear := map[bool]int{true: 2001, false: time.Now().Year()}[tc.writable]
				if fi.ModTime().Year() != wantYear {
					t.Errorf("mtime %s, want the year %d", fi.ModTime(), wantYear)
				}
			}
			if errno := f.Close(); errno != 0 {
				t.Errorf("second Close = %v", errno)
			}
			if _, errno := f.Read(make([]byte, 1)); errno != sys.EBADF {
				t.Errorf("read after Close = %v, want EBADF", errno)
			}
		})
	}
}
