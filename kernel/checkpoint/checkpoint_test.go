package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fingerprint hashes every non-ignored file (path, mode, content or link).
func fingerprint(t *testing.T, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" || strings.HasPrefix(rel, ".git/") {
			return filepath.SkipDir
		}
		for _, s := range skip {
			if rel == s {
				return nil
			}
		}
		if d.IsDir() {
			return nil
		}
		fi, _ := os.Lstat(p)
		var data []byte
		if fi.Mode()&os.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			data = []byte("link:" + l)
		} else {
			data, _ = os.ReadFile(p)
		}
		sum := sha256.Sum256(data)
		out[rel] = fi.Mode().String() + ":" + hex.EncodeToString(sum[:])
		return nil
	})
	return out
}

func TestRoundTripInAGitRepo(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	write(t, ws, "a.go", "package a\n")
	write(t, ws, "dir with spaces/ünïcode.txt", "héllo\n")
	write(t, ws, ".gitignore", "*.log\nbuild/\n")
	write(t, ws, "sub/.gitignore", "secret.txt\n")
	write(t, ws, "bin.dat", "\x00\x01\x02")
	os.Symlink("a.go", filepath.Join(ws, "link.go"))
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-qm", "init")
	write(t, ws, "untracked.txt", "new\n")
	write(t, ws, "a.go", "package a // staged\n")
	git(t, ws, "add", "a.go")
	git(t, ws, "stash", "list")
	before := map[string]string{
		"status": git(t, ws, "status", "--porcelain"), "head": git(t, ws, "rev-parse", "HEAD"),
		"stash": git(t, ws, "stash", "list"), "branch": git(t, ws, "branch", "--show-current"),
	}
	indexBefore, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))

	s, err := Open(ctx, ws, t.TempDir(), Options{})
	if err != nil || s.Shadow() {
		t.Fatalf("open: %v shadow=%v", err, s.Shadow())
	}
	cp, err := s.Create(ctx, Meta{RunID: "r1", Turn: 1, Tool: "edit_file", Summary: "edit a.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := fingerprint(t, ws)

	// The run changes things: edits, deletes, creates, renames, ignored files.
	write(t, ws, "a.go", "package a // edited by the agent\n")
	os.Remove(filepath.Join(ws, "bin.dat"))
	write(t, ws, "new/deep/file.go", "package deep\n")
	os.Rename(filepath.Join(ws, "dir with spaces/ünïcode.txt"), filepath.Join(ws, "renamed.txt"))
	write(t, ws, "run.log", "ignored, kept\n")
	write(t, ws, "sub/secret.txt", "ignored, kept\n")

	if _, err := s.Restore(ctx, cp, "r1"); err != nil {
		t.Fatal(err)
	}
	// Read the user's index before any git command of ours could refresh it.
	indexAfter, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))
	got := fingerprint(t, ws, "run.log", "sub/secret.txt")
	if !equal(want, got) {
		t.Fatalf("restored tree differs:\nwant %v\n got %v", keys(want), keys(got))
	}
	for _, f := range []string{"run.log", "sub/secret.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("ignored %s was touched: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); !os.IsNotExist(err) {
		t.Errorf("directory created after the checkpoint survived: %v", err)
	}
	after := map[string]string{
		"status": git(t, ws, "status", "--porcelain"), "head": git(t, ws, "rev-parse", "HEAD"),
		"stash": git(t, ws, "stash", "list"), "branch": git(t, ws, "branch", "--show-current"),
	}
	for k := range before {
		if before[k] != after[k] {
			t.Errorf("user's git %s changed: %q → %q", k, before[k], after[k])
		}
	}
	if string(indexAfter) != string(indexBefore) {
		t.Error("the user's index file changed")
	}
	list, _ := s.List(ctx)
	if len(list) != 3 || list[2].ID != "r1-1" || list[1].Meta.Summary != "before rewind to r1-1" || list[2].Meta.Tool != "edit_file" {
		t.Fatalf("checkpoints %+v", list)
	}
	// The tree after the rewind is, hash for hash, the checkpoint's tree.
	if list[0].Tree != list[2].Tree {
		t.Errorf("restored tree %s differs from the checkpoint's %s", list[0].Tree, list[2].Tree)
	}
}

func TestShadowRepoAndUndoableRewind(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	write(t, ws, "notes.md", "v1\n")
	s, err := Open(ctx, ws, t.TempDir(), Options{})
	if err != nil || !s.Shadow() {
		t.Fatalf("open: %v shadow=%v", err, s.Shadow())
	}
	cp1, _ := s.Create(ctx, Meta{RunID: "r", Tool: "write_file", Summary: "one"})
	write(t, ws, "notes.md", "v2\n")
	undo, err := s.Restore(ctx, cp1, "r")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.md")); string(b) != "v1\n" {
		t.Fatalf("notes.md = %q", b)
	}
	if _, err := s.Restore(ctx, undo, "r"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.md")); string(b) != "v2\n" {
		t.Fatalf("undoing the rewind gave %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); !os.IsNotExist(err) {
		t.Error("a shadow checkpoint created .git in the workspace")
	}
	if c, err := s.Find(ctx, "1"); err != nil || c.ID != cp1.ID {
		t.Errorf("find 1 = %+v %v, want the batch checkpoint %s (rewind snapshots do not count)", c, err, cp1.ID)
	}
	if _, err := s.Find(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no checkpoint "nope"`) {
		t.Errorf("find nope: %v", err)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v[:12])
	}
	sort.Strings(out)
	return out
}

func TestPruneAndDirty(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	write(t, ws, "a.txt", "1\n")
	s, _ := Open(ctx, ws, t.TempDir(), Options{})
	cp, _ := s.Create(ctx, Meta{RunID: "r", Summary: "one"})
	if d, err := s.Dirty(ctx, cp); err != nil || len(d) != 0 {
		t.Fatalf("clean workspace dirty: %v %v", d, err)
	}
	write(t, ws, "a.txt", "2\n")
	write(t, ws, "b.txt", "new\n")
	if d, _ := s.Dirty(ctx, cp); strings.Join(d, ",") != "M a.txt,A b.txt" {
		t.Fatalf("dirty = %v", d)
	}
	if n, err := s.Prune(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("pruned %d recent checkpoints: %v", n, err)
	}
	if n, err := s.Prune(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("pruned %d, want 1: %v", n, err)
	}
	if all, _ := s.List(ctx); len(all) != 0 {
		t.Fatalf("left %v", all)
	}
}

// TestSnapshotThenCommit: a snapshot taken ahead keeps the state of its
// moment, is not a checkpoint until committed, and commits in order with
// checkpoints made since.
func TestSnapshotThenCommit(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	write(t, ws, "notes.md", "v1\n")
	s, err := Open(ctx, ws, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, "notes.md", "v2\n")
	write(t, ws, "later.md", "x\n")
	if all, err := s.List(ctx); err != nil || len(all) != 0 {
		t.Fatalf("an uncommitted snapshot is listed: %+v %v", all, err)
	}
	start, err := s.Commit(ctx, snap, Meta{RunID: "r", Summary: "start of run"})
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.Create(ctx, Meta{RunID: "r", Summary: "after"})
	if err != nil {
		t.Fatal(err)
	}
	if start.ID != "r-1" || next.ID != "r-2" {
		t.Errorf("ids %s, %s; want r-1, r-2", start.ID, next.ID)
	}
	if _, err := s.Restore(ctx, start, "r"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.md")); string(b) != "v1\n" {
		t.Errorf("notes.md = %q, want the snapshot's v1", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "later.md")); !os.IsNotExist(err) {
		t.Errorf("later.md, written after the snapshot, survived a rewind to it: %v", err)
	}
	if _, err := s.Commit(ctx, Snapshot{}, Meta{RunID: "r"}); err == nil {
		t.Error("committed an empty snapshot")
	}
}

// TestNewRunNeverOverwrites: a run declared new is numbered from 1
// without listing; declared wrongly, its checkpoint fails rather than
// replace the one already there.
func TestNewRunNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	write(t, ws, "a.txt", "1\n")
	state := t.TempDir()
	s, err := Open(ctx, ws, state, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.NewRun("fresh")
	if cp, err := s.Create(ctx, Meta{RunID: "fresh"}); err != nil || cp.ID != "fresh-1" {
		t.Fatalf("first checkpoint of a new run: %+v %v", cp, err)
	}
	first, err := s.Find(ctx, "fresh-1")
	if err != nil {
		t.Fatal(err)
	}
	// Another store of the same workspace, told wrongly the run is new.
	again, err := Open(ctx, ws, state, Options{})
	if err != nil {
		t.Fatal(err)
	}
	again.NewRun("fresh")
	write(t, ws, "a.txt", "2\n")
	if _, err := again.Create(ctx, Meta{RunID: "fresh"}); err == nil {
		t.Fatal("a checkpoint numbered over an existing one was recorded")
	}
	if c, err := again.Find(ctx, "fresh-1"); err != nil || c.Commit != first.Commit {
		t.Errorf("fresh-1 is now %+v (%v), was %s", c, err, first.Commit)
	}
}
