//go:build unix

package wsync_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// The remote side is a real directory, reached the way a backend reaches
// one: sh -c SCRIPT with the tar stream on stdin or stdout.
func push(t *testing.T, m *wsync.Mirror, remote string) *wsync.Plan {
	t.Helper()
	p, err := m.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Empty() {
		return p
	}
	var tarball bytes.Buffer
	if err := p.WriteTar(&tarball); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", p.Script(remote))
	cmd.Stdin = &tarball
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("remote apply: %v\n%s\nscript: %s", err, out, p.Script(remote))
	}
	p.Done()
	return p
}

func pull(t *testing.T, m *wsync.Mirror, remote string) wsync.Changes {
	t.Helper()
	out, err := exec.Command("sh", "-c", wsync.PullScript(remote)).Output()
	if err != nil {
		t.Fatal(err)
	}
	ch, err := m.Pull(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree lists root's files with their contents (symlinks as "-> target").
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			got[rel] = "-> " + l
		case d.IsDir():
			got[rel+"/"] = ""
		default:
			b, _ := os.ReadFile(p)
			got[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

var deny = []string{".git", ".env", "*.pem"}

func TestRoundTrip(t *testing.T) {
	host, remote := t.TempDir(), filepath.Join(t.TempDir(), "ws")
	write(t, host, map[string]string{
		"main.go": "package main\n", "pkg/a.go": "package pkg\n", "run.sh": "#!/bin/sh\n",
		".env": "TOKEN=hunter2\n", "certs/key.pem": "PRIVATE\n", ".git/config": "[core]\n", "src/.env": "X=1\n",
	})
	must(t, os.Chmod(filepath.Join(host, "run.sh"), 0o755))
	must(t, os.Symlink("main.go", filepath.Join(host, "link")))
	m := wsync.New(host, deny)

	p := push(t, m, remote)
	if !p.Full {
		t.Error("first push is not full")
	}
	want := map[string]string{"main.go": "package main\n", "pkg/": "", "pkg/a.go": "package pkg\n", "run.sh": "#!/bin/sh\n",
		"certs/": "", "src/": "", "link": "-> main.go"}
	if d := cmp.Diff(want, tree(t, remote)); d != "" {
		t.Fatalf("remote after first push (-want +got); denied paths must stay home:\n%s", d)
	}
	if fi, _ := os.Stat(filepath.Join(remote, "run.sh")); fi.Mode().Perm()&0o100 == 0 {
		t.Error("the executable bit was lost on the way up")
	}

	// Nothing changed: nothing to push.
	if p, _ := m.Plan(); !p.Empty() {
		t.Errorf("unchanged host planned %+v", p)
	}

	// The command edits, creates, deletes, and writes a denied file.
	write(t, remote, map[string]string{"main.go": "package main // edited\n", "new/b.go": "package new\n", ".env": "REMOTE=1\n"})
	must(t, os.Remove(filepath.Join(remote, "pkg/a.go")))
	must(t, os.Remove(filepath.Join(remote, "pkg")))
	ch := pull(t, m, remote)

	want = map[string]string{"main.go": "package main // edited\n", "new/": "", "new/b.go": "package new\n", "run.sh": "#!/bin/sh\n",
		"certs/": "", "certs/key.pem": "PRIVATE\n", "src/": "", "src/.env": "X=1\n", "link": "-> main.go",
		".env": "TOKEN=hunter2\n", ".git/": "", ".git/config": "[core]\n"}
	if d := cmp.Diff(want, tree(t, host)); d != "" {
		t.Errorf("host after pull (-want +got):\n%s", d)
	}
	sort.Strings(ch.Written)
	if d := cmp.Diff([]string{"main.go", "new/b.go"}, ch.Written); d != "" {
		t.Errorf("written (-want +got):\n%s", d)
	}
	if !slices.Contains(ch.Removed, "pkg/a.go") || !slices.Contains(ch.Removed, "pkg") {
		t.Errorf("removed %q, want pkg/a.go and pkg", ch.Removed)
	}
	if !slices.Contains(ch.Skipped, "./.env") {
		t.Errorf("the remote .env was not skipped: %q", ch.Skipped)
	}

	// A pull changes nothing to push back.
	if p, _ := m.Plan(); !p.Empty() {
		t.Errorf("after a pull, planned %+v", p)
	}

	// The host changes between commands (a file tool, a rewind): only the
	// delta goes up, deletions included, a file may become a directory.
	write(t, host, map[string]string{"main.go": "package main // rewound\n"})
	must(t, os.Remove(filepath.Join(host, "run.sh")))
	must(t, os.RemoveAll(filepath.Join(host, "new")))
	must(t, os.Remove(filepath.Join(host, "link")))
	write(t, host, map[string]string{"link/inside.txt": "now a dir\n"})
	p = push(t, m, remote)
	if p.Full || !slices.Contains(p.Changed, "main.go") || slices.Contains(p.Changed, "certs") {
		t.Errorf("delta push: full=%v changed=%q", p.Full, p.Changed)
	}
	if d := cmp.Diff([]string{"link", "new", "run.sh"}, p.Deleted); d != "" {
		t.Errorf("deleted (-want +got), new/b.go covered by new:\n%s", d)
	}
	want = map[string]string{"main.go": "package main // rewound\n", "certs/": "", "src/": "", "link/": "", "link/inside.txt": "now a dir\n", ".env": "REMOTE=1\n"}
	if d := cmp.Diff(want, tree(t, remote)); d != "" {
		t.Errorf("remote after delta push (-want +got):\n%s", d)
	}
}

func TestPullNeverWritesOutside(t *testing.T) {
	host, remote, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, host, map[string]string{"a.txt": "a\n"})
	m := wsync.New(host, deny)
	push(t, m, remote)

	// The remote plants an escaping symlink, a symlinked directory leading
	// out, and tries to write through it.
	must(t, os.Symlink("../../etc/passwd", filepath.Join(remote, "evil")))
	must(t, os.Symlink(outside, filepath.Join(remote, "out")))
	ch := pull(t, m, remote)
	if _, err := os.Lstat(filepath.Join(host, "evil")); err == nil {
		t.Error("a symlink leading out of the workspace was written")
	}
	if _, err := os.Lstat(filepath.Join(host, "out")); err == nil {
		t.Error("an absolute symlink was written")
	}
	if len(ch.Skipped) != 2 {
		t.Errorf("skipped %q, want both links", ch.Skipped)
	}

	// A host-side symlinked directory that leads out is never written
	// through, even when the remote holds a real directory there.
	must(t, os.Symlink(outside, filepath.Join(host, "cache")))
	write(t, remote, map[string]string{"cache/x.txt": "pwned\n"})
	pull(t, m, remote)
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("a pull wrote through a symlink out of the workspace")
	}
}

func TestPullKeepsUnchangedFilesAndHostOnlyFiles(t *testing.T) {
	host, remote := t.TempDir(), t.TempDir()
	write(t, host, map[string]string{"keep.txt": "same\n"})
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	must(t, os.Chtimes(filepath.Join(host, "keep.txt"), old, old))
	m := wsync.New(host, deny)
	push(t, m, remote)
	// A file appears on the host while the command runs (the user, an
	// editor): it was never synced, so the pull must not delete it.
	write(t, host, map[string]string{"mine.txt": "host only\n"})
	ch := pull(t, m, remote)
	if len(ch.Written) != 0 || len(ch.Removed) != 0 {
		t.Errorf("a no-op pull wrote %q and removed %q", ch.Written, ch.Removed)
	}
	if fi, _ := os.Stat(filepath.Join(host, "keep.txt")); !fi.ModTime().Equal(old) {
		t.Errorf("unchanged file's mtime moved: %v", fi.ModTime())
	}
	if _, err := os.Stat(filepath.Join(host, "mine.txt")); err != nil {
		t.Error("a host-only file was deleted by a pull")
	}
	// It was never on the remote: the next push sends it, and the next
	// pull keeps it.
	if p := push(t, m, remote); !slices.Contains(p.Changed, "mine.txt") {
		t.Errorf("the next push left out the host-only file: %q", p.Changed)
	}
	pull(t, m, remote)
	if _, err := os.Stat(filepath.Join(host, "mine.txt")); err != nil {
		t.Error("a host-only file was deleted by the second pull")
	}
}

func TestFailedPushIsRetried(t *testing.T) {
	host, remote := t.TempDir(), t.TempDir()
	write(t, host, map[string]string{"a.txt": "a\n"})
	m := wsync.New(host, deny)
	p, _ := m.Plan()
	_ = p // never applied, never Done
	p2 := push(t, m, remote)
	if !p2.Full || !slices.Contains(p2.Changed, "a.txt") {
		t.Errorf("a push that was never done is not planned again: %+v", p2)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/ws": "/tmp/ws", "": "''", "it's": `'it'\''s'`, "a b": "'a b'", "$(rm -rf /)": "'$(rm -rf /)'",
	} {
		if got := wsync.Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		out, err := exec.Command("sh", "-c", "printf %s "+wsync.Quote(in)).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh reads Quote(%q) back as %q (%v)", in, out, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Host symlinks that lead out of the workspace are never copied back, and
// never deleted either: they still exist remotely.
func TestPullKeepsHostLinksLeadingOut(t *testing.T) {
	host, remote := t.TempDir(), t.TempDir()
	write(t, host, map[string]string{"a.txt": "a\n"})
	must(t, os.Symlink("..", filepath.Join(host, "up")))
	must(t, os.Symlink("/etc/hostname", filepath.Join(host, "abs")))
	m := wsync.New(host, deny)
	push(t, m, remote)
	pull(t, m, remote)
	pull(t, m, remote)
	for _, l := range []string{"up", "abs"} {
		if _, err := os.Lstat(filepath.Join(host, l)); err != nil {
			t.Errorf("host symlink %s was deleted by a pull: %v", l, err)
		}
	}
}

// A stream cut short between two entries looks like a smaller archive;
// without the trailer Pull must delete nothing.
func TestPullOfACutStreamDeletesNothing(t *testing.T) {
	host, remote := t.TempDir(), t.TempDir()
	write(t, host, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	m := wsync.New(host, deny)
	push(t, m, remote)
	// A well-formed archive of one file, with no trailer after it: what a
	// dropped connection can leave.
	out, err := exec.Command("tar", "-cf", "-", "-C", remote, "./a.txt").Output()
	must(t, err)
	if _, err := m.Pull(bytes.NewReader(out)); !errors.Is(err, wsync.ErrIncomplete) {
		t.Fatalf("pull of a cut stream: %v, want ErrIncomplete", err)
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(host, f)); err != nil {
			t.Errorf("%s deleted after a cut stream: %v", f, err)
		}
	}
}
