package checkpoint

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// userState is what a checkpoint must never change in the user's repo.
// The index is read before git status, which may refresh it.
func userState(t *testing.T, ws string) map[string]string {
	t.Helper()
	index, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))
	merge, _ := os.ReadFile(filepath.Join(ws, ".git", "MERGE_HEAD"))
	head, _ := os.ReadFile(filepath.Join(ws, ".git", "HEAD"))
	return map[string]string{
		"status": git(t, ws, "status", "--porcelain=v2"), "stash": git(t, ws, "stash", "list"),
		"index": string(index), "MERGE_HEAD": string(merge), "HEAD": string(head),
	}
}

func sameState(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k := range before {
		if before[k] != after[k] {
			t.Errorf("user's %s changed:\n%q\n→\n%q", k, before[k], after[k])
		}
	}
}

func TestRepoInTheMiddleOfAMerge(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	git(t, ws, "init", "-q", "-b", "main")
	write(t, ws, "f.txt", "base\n")
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-qm", "base")
	git(t, ws, "checkout", "-qb", "other")
	write(t, ws, "f.txt", "other\n")
	git(t, ws, "commit", "-qam", "other")
	git(t, ws, "checkout", "-q", "main")
	write(t, ws, "f.txt", "main\n")
	git(t, ws, "commit", "-qam", "main")
	if err := gitFails(ws, "merge", "other"); err == nil {
		t.Fatal("merge did not conflict")
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "MERGE_HEAD")); err != nil {
		t.Fatalf("not mid-merge: %v", err)
	}
	git(t, ws, "status") // let git settle the index's stat data first
	before := userState(t, ws)
	want := fingerprint(t, ws)

	s, err := Open(ctx, ws, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Create(ctx, Meta{RunID: "r", Tool: "edit_file", Summary: "resolve"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, "f.txt", "resolved by the agent\n")
	write(t, ws, "extra.txt", "new\n")
	if _, err := s.Restore(ctx, cp, "r"); err != nil {
		t.Fatal(err)
	}
	if got := fingerprint(t, ws); !equal(want, got) {
		t.Fatalf("restored tree differs:\nwant %v\n got %v", keys(want), keys(got))
	}
	// The conflict markers are content like any other; the merge state is
	// the user's and stays.
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); !strings.Contains(string(b), "<<<<<<<") {
		t.Errorf("conflict markers lost: %q", b)
	}
	sameState(t, before, userState(t, ws))
}

func TestRepoWithNoCommitsYet(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	write(t, ws, "first.go", "package first\n")
	git(t, ws, "status") // let git settle the index's stat data first
	before := userState(t, ws)
	want := fingerprint(t, ws)

	s, err := Open(ctx, ws, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Shadow() {
		t.Fatal("a repository without commits got a shadow repository")
	}
	cp, err := s.Create(ctx, Meta{RunID: "r", Tool: "write_file", Summary: "write"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, "first.go", "package first // changed\n")
	write(t, ws, "second.go", "package first\n")
	if _, err := s.Restore(ctx, cp, "r"); err != nil {
		t.Fatal(err)
	}
	if got := fingerprint(t, ws); !equal(want, got) {
		t.Fatalf("restored tree differs:\nwant %v\n got %v", keys(want), keys(got))
	}
	if err := gitFails(ws, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		t.Error("the checkpoint gave the unborn branch a commit")
	}
	sameState(t, before, userState(t, ws))
}

func TestFilesOverTheSizeCapAreSkippedAndNamed(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	write(t, ws, "small.txt", "v1\n")
	write(t, ws, "grows.bin", "tiny\n")
	s, err := Open(ctx, ws, t.TempDir(), Options{MaxFileSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	cp1, err := s.Create(ctx, Meta{RunID: "r", Tool: "shell", Summary: "one"})
	if err != nil || len(cp1.Meta.Skipped) != 0 {
		t.Fatalf("cp1: skipped %v, %v", cp1.Meta.Skipped, err)
	}
	big := strings.Repeat("x", 4096)
	write(t, ws, "dir/huge file.bin", big)
	write(t, ws, "grows.bin", big)
	write(t, ws, "small.txt", "v2\n")
	cp2, err := s.Create(ctx, Meta{RunID: "r", Tool: "shell", Summary: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dir/huge file.bin", "grows.bin"}; !slices.Equal(cp2.Meta.Skipped, want) {
		t.Fatalf("skipped %q, want %q", cp2.Meta.Skipped, want)
	}
	if list, _ := s.List(ctx); !slices.Equal(list[0].Meta.Skipped, cp2.Meta.Skipped) {
		t.Errorf("list does not carry the skipped files: %+v", list[0].Meta)
	}
	files := git(t, ws, "--git-dir", filepath.Join(ws, ".git"), "ls-tree", "-r", "--name-only", cp2.Commit)
	if strings.Contains(files, "huge") || strings.Contains(files, "grows.bin") {
		t.Errorf("oversized files were snapshotted anyway:\n%s", files)
	}

	// Back to cp2: the skipped files are not the checkpoint's to touch.
	write(t, ws, "small.txt", "v3\n")
	if _, err := s.Restore(ctx, cp2, "r"); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"small.txt": "v2\n", "dir/huge file.bin": big, "grows.bin": big} {
		if b, _ := os.ReadFile(filepath.Join(ws, rel)); string(b) != want {
			t.Errorf("after rewind to cp2 %s = %.20q…, want %.20q…", rel, b, want)
		}
	}
	// Back to cp1, where grows.bin was small and snapshotted: it returns.
	if _, err := s.Restore(ctx, cp1, "r"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "grows.bin")); string(b) != "tiny\n" {
		t.Errorf("grows.bin = %.20q, want its checkpointed content", b)
	}

	// Without a cap nothing is skipped.
	uncapped, _ := Open(ctx, ws, t.TempDir(), Options{MaxFileSize: -1})
	write(t, ws, "grows.bin", big)
	cp, err := uncapped.Create(ctx, Meta{RunID: "u", Summary: "all"})
	if err != nil || len(cp.Meta.Skipped) != 0 {
		t.Fatalf("uncapped skipped %v: %v", cp.Meta.Skipped, err)
	}
}

func TestBadInputLeavesTheWorkspaceAlone(t *testing.T) {
	ctx := context.Background()

	t.Run("workspace deleted", func(t *testing.T) {
		ws := filepath.Join(t.TempDir(), "ws")
		write(t, ws, "a.txt", "a\n")
		s, err := Open(ctx, ws, t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(ws)
		if _, err := s.Create(ctx, Meta{RunID: "r", Summary: "x"}); err == nil || !strings.Contains(err.Error(), ws) {
			t.Fatalf("create in a deleted workspace: %v, want an error naming %s", err, ws)
		}
		if _, err := Open(ctx, ws, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), ws) {
			t.Fatalf("open a deleted workspace: %v", err)
		}
	})

	t.Run("checkpoint ref gone", func(t *testing.T) {
		ws := t.TempDir()
		git(t, ws, "init", "-q")
		write(t, ws, "a.txt", "a\n")
		s, _ := Open(ctx, ws, t.TempDir(), Options{})
		cp, _ := s.Create(ctx, Meta{RunID: "r", Tool: "shell", Summary: "x"})
		git(t, ws, "update-ref", "-d", cp.Ref)
		if _, err := s.Find(ctx, cp.ID); err == nil || !strings.Contains(err.Error(), "has no checkpoints") {
			t.Fatalf("find a deleted checkpoint: %v", err)
		}
	})

	t.Run("checkpoint objects gone", func(t *testing.T) {
		ws := t.TempDir()
		git(t, ws, "init", "-q")
		write(t, ws, "a.txt", "a\n")
		s, _ := Open(ctx, ws, t.TempDir(), Options{})
		bogus := Checkpoint{ID: "r-9", Tree: strings.Repeat("ab", 20), Commit: strings.Repeat("cd", 20)}
		write(t, ws, "a.txt", "mine\n")
		want := fingerprint(t, ws)
		if _, err := s.Restore(ctx, bogus, "r"); err == nil || !strings.Contains(err.Error(), "rewind") {
			t.Fatalf("restore to a missing tree: %v", err)
		}
		if got := fingerprint(t, ws); !equal(want, got) {
			t.Fatalf("a failed rewind changed the workspace:\nwant %v\n got %v", keys(want), keys(got))
		}
	})

	t.Run("git missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := Open(ctx, t.TempDir(), t.TempDir(), Options{})
		if err == nil || !strings.Contains(err.Error(), "need git, which is not installed") {
			t.Fatalf("open without git: %v", err)
		}
	})
}

// gitFails runs git in dir and returns only whether it failed.
func gitFails(dir string, args ...string) error {
	cmd := osexec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	return cmd.Run()
}

// A workspace below a repository's top is not that repository: it gets a
// shadow repository, so a rewind never touches files outside it.
func TestWorkspaceInsideARepository(t *testing.T) {
	top := t.TempDir()
	git(t, top, "init", "-q")
	ws := filepath.Join(top, "sub")
	write(t, ws, "a.go", "package a\n")
	s, err := Open(context.Background(), ws, t.TempDir(), Options{})
	if err != nil || !s.Shadow() {
		t.Fatalf("open %s: %v shadow=%v", ws, err, s.Shadow())
	}
	s, err = Open(context.Background(), top, t.TempDir(), Options{})
	if err != nil || s.Shadow() {
		t.Fatalf("open %s: %v shadow=%v", top, err, s.Shadow())
	}
}
