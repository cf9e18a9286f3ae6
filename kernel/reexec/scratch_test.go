package reexec_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/checkpoint"
	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/kernel/reexec"
)

const runID = "20260101-120000-abcdef"

// git runs git in dir and returns its trimmed output. It takes no
// optional locks, so reading status never rewrites the index it checks.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--no-optional-locks", "-C", dir,
		"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	return strings.TrimRight(string(out), "\n"), err
}

func write(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// files maps every file under root but .git to its content.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// userState is what a user sees of their repository.
type userState struct {
	Files  map[string]string
	Status string
	HEAD   string
	Refs   string
	Index  []byte
}

func stateOf(t *testing.T, ws string) userState {
	t.Helper()
	// The index first: nothing below may refresh it, but be sure.
	index, err := os.ReadFile(filepath.Join(ws, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return userState{
		Files:  files(t, ws),
		Status: git(t, ws, "status", "--porcelain", "--untracked-files=all"),
		HEAD:   git(t, ws, "rev-parse", "HEAD"),
		Refs:   git(t, ws, "for-each-ref"),
		Index:  index,
	}
}

func open(t *testing.T, ws string) *checkpoint.Store {
	t.Helper()
	store, err := checkpoint.Open(t.Context(), ws, t.TempDir(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// start takes the start-of-run checkpoint and the inputs a run records
// with it, as the kernel does when a run begins.
func start(t *testing.T, store *checkpoint.Store, head string) recorder.Inputs {
	t.Helper()
	cp, err := store.Create(t.Context(), checkpoint.Meta{RunID: runID, Summary: "start of run"})
	if err != nil {
		t.Fatal(err)
	}
	return recorder.Inputs{RunID: runID, Workspace: store.Workspace(), RepoHEAD: head,
		StartCheckpoint: cp.ID, StartCommit: cp.Commit}
}

// Not valid UTF-8 and with a CR LF: must come back byte for byte.
var untracked = []byte("draft\r\n\x00\xff\xfe notes\n")

// gitWorkspace is a repository with two commits, then an uncommitted
// modification, an uncommitted deletion, untracked files and an ignored
// one. It returns the workspace and its HEAD.
func gitWorkspace(t *testing.T) (string, string) {
	t.Helper()
	ws := t.TempDir()
	git(t, ws, "init", "-q", "-b", "main")
	write(t, ws, ".gitignore", []byte("*.log\n"))
	write(t, ws, "main.go", []byte("package main\n"))
	write(t, ws, "gone.txt", []byte("tracked, deleted before the run\n"))
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-q", "-m", "first")
	write(t, ws, "main.go", []byte("package main\n\nfunc main() {}\n"))
	git(t, ws, "commit", "-q", "-am", "second")

	write(t, ws, "main.go", []byte("package main\n\nfunc main() { println(\"wip\") }\n"))
	if err := os.Remove(filepath.Join(ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "notes.txt", untracked)
	write(t, ws, "sub/dir/new.go", []byte("package dir\n"))
	write(t, ws, "debug.log", []byte("ignored\n"))
	return ws, git(t, ws, "rev-parse", "HEAD")
}

// changeLater is what the user does after the run started: edits, new
// files, deletions and a commit that moves HEAD.
func changeLater(t *testing.T, ws string) {
	t.Helper()
	write(t, ws, "notes.txt", []byte("rewritten later\n"))
	write(t, ws, "later.txt", []byte("made after the run started\n"))
	if err := os.RemoveAll(filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); err == nil {
		write(t, ws, "main.go", []byte("package main // committed later\n"))
		git(t, ws, "commit", "-q", "-am", "later")
	} else {
		write(t, ws, "main.go", []byte("package main // changed later\n"))
	}
}

func TestScratchGitWorkspace(t *testing.T) {
	ws, head := gitWorkspace(t)
	store := open(t, ws)
	in := start(t, store, head)
	statusAtStart := git(t, ws, "status", "--porcelain", "--untracked-files=all")
	changeLater(t, ws)
	if git(t, ws, "rev-parse", "HEAD") == head {
		t.Fatal("setup: HEAD should have moved since the run started")
	}

	before := stateOf(t, ws)
	dir := t.TempDir()
	notes, err := reexec.Scratch(t.Context(), store, in, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes = %q, want none", notes)
	}

	// The scratch holds exactly what the run found: uncommitted and
	// untracked files as they were, nothing ignored, nothing later.
	want := map[string]string{
		".gitignore":     "*.log\n",
		"main.go":        "package main\n\nfunc main() { println(\"wip\") }\n",
		"notes.txt":      string(untracked),
		"sub/dir/new.go": "package dir\n",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("scratch files (-want +got):\n%s", diff)
	}

	// It is a repository at the recorded HEAD, detached, where git sees
	// the same uncommitted changes the run saw.
	if got := git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("scratch HEAD = %s, want the recorded %s", got, head)
	}
	if out, err := gitErr(dir, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Errorf("scratch HEAD is on branch %s, want detached", out)
	}
	if got := git(t, dir, "status", "--porcelain", "--untracked-files=all"); got != statusAtStart {
		t.Errorf("git status in the scratch:\n%s\nwant, as in the workspace when the run started:\n%s", got, statusAtStart)
	}

	// The user's workspace and repository are as they were.
	after := stateOf(t, ws)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the user's workspace changed (-before +after):\n%s", diff)
	}
}

func TestScratchNonGitWorkspace(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "main.go", []byte("package main\n"))
	write(t, ws, "notes.txt", untracked)
	write(t, ws, "sub/dir/new.go", []byte("package dir\n"))
	store := open(t, ws)
	if !store.Shadow() {
		t.Fatal("setup: a workspace outside git should get a shadow repository")
	}
	in := start(t, store, "")
	changeLater(t, ws)
	before := files(t, ws)

	dir := t.TempDir()
	notes, err := reexec.Scratch(t.Context(), store, in, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes = %q, want none", notes)
	}
	want := map[string]string{
		"main.go":        "package main\n",
		"notes.txt":      string(untracked),
		"sub/dir/new.go": "package dir\n",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("scratch files (-want +got):\n%s", diff)
	}
	for _, d := range []string{dir, ws} {
		if _, err := os.Stat(filepath.Join(d, ".git")); !os.IsNotExist(err) {
			t.Errorf("%s has a .git (%v); outside git neither workspace nor scratch should", d, err)
		}
	}
	if diff := cmp.Diff(before, files(t, ws)); diff != "" {
		t.Errorf("the user's workspace changed (-before +after):\n%s", diff)
	}
}

func TestScratchRepositoryWithoutCommits(t *testing.T) {
	ws := t.TempDir()
	git(t, ws, "init", "-q", "-b", "main")
	write(t, ws, "main.go", []byte("package main\n"))
	store := open(t, ws)
	in := start(t, store, "") // no HEAD to record yet

	dir := t.TempDir()
	if _, err := reexec.Scratch(t.Context(), store, in, dir); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"main.go": "package main\n"}, files(t, dir)); diff != "" {
		t.Errorf("scratch files (-want +got):\n%s", diff)
	}
	if out, err := gitErr(dir, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		t.Errorf("scratch HEAD = %s, want unborn like the workspace's", out)
	}
	if got, want := git(t, dir, "status", "--porcelain"), "?? main.go"; got != want {
		t.Errorf("git status in the scratch = %q, want %q", got, want)
	}
}

// An older Sparrow recorded only the HEAD: the scratch is that commit, and
// a note says the uncommitted changes are missing.
func TestScratchWithoutStartCheckpoint(t *testing.T) {
	ws, head := gitWorkspace(t)
	store := open(t, ws)
	in := recorder.Inputs{RunID: runID, Workspace: ws, RepoHEAD: head}
	changeLater(t, ws)
	before := stateOf(t, ws)

	dir := t.TempDir()
	notes, err := reexec.Scratch(t.Context(), store, in, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 {
		t.Fatalf("notes = %q, want one", notes)
	}
	for _, part := range []string{runID, "no start checkpoint", "HEAD " + head[:12], "uncommitted"} {
		if !strings.Contains(notes[0], part) {
			t.Errorf("note %q does not mention %q", notes[0], part)
		}
	}
	want := map[string]string{
		".gitignore": "*.log\n",
		"main.go":    "package main\n\nfunc main() {}\n",
		"gone.txt":   "tracked, deleted before the run\n",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("scratch files (-want +got):\n%s", diff)
	}
	if got := git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("scratch HEAD = %s, want the recorded %s", got, head)
	}
	if got := git(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("git status in the scratch = %q, want clean", got)
	}
	if diff := cmp.Diff(before, stateOf(t, ws)); diff != "" {
		t.Errorf("the user's workspace changed (-before +after):\n%s", diff)
	}
}

func TestScratchUnknownStart(t *testing.T) {
	ws := t.TempDir()
	store := open(t, ws)
	dir := t.TempDir()
	notes, err := reexec.Scratch(t.Context(), store, recorder.Inputs{RunID: runID, Workspace: ws}, dir)
	if err == nil {
		t.Fatal("Scratch succeeded for a run that recorded neither a start checkpoint nor a HEAD")
	}
	for _, part := range []string{runID, "unknown"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err, part)
		}
	}
	if len(notes) != 0 {
		t.Errorf("notes = %q, want none", notes)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("scratch got files %v, want it left empty", got)
	}
}

// The start checkpoint was pruned and its objects collected: the error
// names it instead of a bare git failure.
func TestScratchStartCheckpointGone(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) (ws, head string)
	}{
		{"git workspace", gitWorkspace},
		{"non-git workspace", func(t *testing.T) (string, string) {
			ws := t.TempDir()
			write(t, ws, "notes.txt", untracked)
			return ws, ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, head := tt.setup(t)
			store := open(t, ws)
			in := start(t, store, head)
			n, err := store.Prune(t.Context(), time.Now().Add(time.Hour))
			if err != nil || n != 1 {
				t.Fatalf("Prune = %d, %v; want the start checkpoint pruned", n, err)
			}
			// What the repository's gc does later.
			git(t, store.GitDir(), "prune", "--expire=now")

			_, err = reexec.Scratch(t.Context(), store, in, t.TempDir())
			if err == nil {
				t.Fatal("Scratch succeeded from a checkpoint that is gone")
			}
			for _, part := range []string{in.StartCheckpoint, runID, "gone"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
		})
	}
}

// The user rewrote history since the run and the recorded HEAD was
// collected: the error names that commit.
func TestScratchRecordedHEADGone(t *testing.T) {
	ws, head := gitWorkspace(t)
	store := open(t, ws)
	in := start(t, store, head)
	git(t, ws, "reset", "-q", "--soft", "HEAD~1")
	git(t, ws, "reflog", "expire", "--expire=now", "--all")
	git(t, ws, "prune", "--expire=now")
	if _, err := gitErr(ws, "cat-file", "-e", head); err == nil {
		t.Fatal("setup: the recorded HEAD should be gone")
	}

	_, err := reexec.Scratch(t.Context(), store, in, t.TempDir())
	if err == nil {
		t.Fatal("Scratch succeeded at a HEAD the repository no longer has")
	}
	if !strings.Contains(err.Error(), head[:12]) {
		t.Errorf("error %q does not name the recorded HEAD %s", err, head[:12])
	}
}

// A relative dir is the caller's, not the workspace's: nothing may land in
// the user's workspace.
func TestScratchRelativeDir(t *testing.T) {
	ws, head := gitWorkspace(t)
	store := open(t, ws)
	in := start(t, store, head)
	before := stateOf(t, ws)

	parent := t.TempDir()
	t.Chdir(parent)
	if err := os.Mkdir("scratch", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := reexec.Scratch(t.Context(), store, in, "scratch"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, filepath.Join(parent, "scratch"))["notes.txt"]; got != string(untracked) {
		t.Errorf("scratch/notes.txt = %q, want %q", got, untracked)
	}
	if diff := cmp.Diff(before, stateOf(t, ws)); diff != "" {
		t.Errorf("the user's workspace changed (-before +after):\n%s", diff)
	}
}
