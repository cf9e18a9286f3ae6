//go:build unix

package worktree_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/worktree"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repo is a real repository with one commit, a tracked subdirectory and
// an ignored secret.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "--quiet", "-b", "main")
	write(t, dir, "README.md", "ahoy\n")
	write(t, dir, "pkg/a.go", "package pkg\n")
	write(t, dir, ".gitignore", ".env\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "--quiet", "-m", "init")
	write(t, dir, ".env", "TOKEN=hunter2\n")
	return dir
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func backend(t *testing.T) (*worktree.Worktree, string) {
	t.Helper()
	state := t.TempDir()
	w := worktree.New()
	if err := w.Configure(context.Background(), plugin.Config{Values: json.RawMessage(`{}`), StateDir: state}); err != nil {
		t.Fatal(err)
	}
	return w, state
}

var policy = sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env"}, EnvAllowlist: []string{"PATH"}}

func run(t *testing.T, w *worktree.Worktree, s sandbox.Session, script string) (sandbox.Exit, string) {
	t.Helper()
	var out bytes.Buffer
	exit, err := w.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", script}, Workdir: s.Workdir},
		sandbox.IO{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	return exit, out.String()
}

func TestChangesLandOnTheBranchOnly(t *testing.T) {
	dir := repo(t)
	head := git(t, dir, "rev-parse", "HEAD")
	w, state := backend(t)
	s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "20261123-run1", Workspace: dir, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	wantPath := filepath.Join(worktree.Dir(state, mustReal(t, dir)), "20261123-run1")
	if s.HostWorkspace != wantPath || s.Workdir != wantPath {
		t.Fatalf("session %+v, want the worktree %s", s, wantPath)
	}
	if got := git(t, dir, "rev-parse", "sparrow/20261123-run1"); got != head {
		t.Errorf("branch starts at %s, want HEAD %s", got, head)
	}
	// The ignored secret is not in the worktree: nothing to leak.
	if _, out := run(t, w, s, "ls -A"); !strings.Contains(out, "README.md") || strings.Contains(out, ".env") {
		t.Errorf("worktree listing %q: want the tracked files and no .env", out)
	}
	if exit, _ := run(t, w, s, "echo changed >> README.md && echo new > new.txt && rm pkg/a.go"); exit.Code != 0 {
		t.Fatalf("edit in the worktree: %+v", exit)
	}
	// The user's checkout is untouched while the run works.
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("user's checkout changed: %q", st)
	}
	rel, err := w.Teardown(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"branch sparrow/20261123-run1", "3 files changed", "sparrow worktree merge 20261123-run1", "sparrow worktree discard 20261123-run1"} {
		if !strings.Contains(rel.Notice, want) {
			t.Errorf("notice lacks %q:\n%s", want, rel.Notice)
		}
	}
	if got := git(t, dir, "show", "sparrow/20261123-run1:new.txt"); got != "new" {
		t.Errorf("branch holds new.txt = %q", got)
	}
	if git(t, dir, "rev-parse", "HEAD") != head || git(t, dir, "branch", "--show-current") != "main" {
		t.Error("the user's HEAD or branch moved")
	}
	if _, err := w.Teardown(context.Background(), s.ID); err != nil {
		t.Errorf("second teardown: %v", err)
	}
}

func TestNoChangesLeaveNothingBehind(t *testing.T) {
	dir := repo(t)
	w, _ := backend(t)
	s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r2", Workspace: dir, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	run(t, w, s, "cat README.md")
	rel, err := w.Teardown(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rel.Notice, "no changes") {
		t.Errorf("notice %q", rel.Notice)
	}
	if _, err := os.Stat(s.HostWorkspace); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
	if out := git(t, dir, "branch", "--list", "sparrow/*"); out != "" {
		t.Errorf("branches left: %q", out)
	}
}

func TestSubdirectoryAndNoReuse(t *testing.T) {
	dir := repo(t)
	w, _ := backend(t)
	git(t, dir, "branch", "sparrow/r3") // someone's earlier run, maybe unmerged
	s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r3", Workspace: filepath.Join(dir, "pkg"), Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(s.HostWorkspace) != "pkg" || filepath.Base(filepath.Dir(s.HostWorkspace)) != "r3-2" {
		t.Errorf("workspace %s, want <worktrees>/r3-2/pkg", s.HostWorkspace)
	}
	if _, out := run(t, w, s, "ls"); strings.TrimSpace(out) != "a.go" {
		t.Errorf("commands run in %q", out)
	}
	_, _ = w.Teardown(context.Background(), s.ID)
}

func TestRefusals(t *testing.T) {
	w, _ := backend(t)
	plain := t.TempDir()
	_, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "x", Workspace: plain, Policy: policy})
	if err == nil || !strings.Contains(err.Error(), "is not inside a git repository") {
		t.Errorf("non-git workspace: %v", err)
	}
	empty := t.TempDir()
	git(t, empty, "init", "--quiet")
	_, err = w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "x", Workspace: empty, Policy: policy})
	if err == nil || !strings.Contains(err.Error(), "no commit yet") {
		t.Errorf("repository without commits: %v", err)
	}
	unconfigured := worktree.New()
	_, err = unconfigured.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "x", Workspace: repo(t), Policy: policy})
	if err == nil || !strings.Contains(err.Error(), "no state directory") {
		t.Errorf("without a state dir: %v", err)
	}
}

// A host secret in the plugin's environment never reaches a command; a
// variable the request carries does.
func TestSecretEnvironment(t *testing.T) {
	t.Setenv("SPARROW_TEST_SECRET", "hunter2")
	dir := repo(t)
	w, _ := backend(t)
	s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "env", Workspace: dir, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Teardown(context.Background(), s.ID)
	var out bytes.Buffer
	if _, err := w.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"env"}, Workdir: s.Workdir,
		Env: map[string]string{"ALLOWED": "yes"}}, sandbox.IO{Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "ALLOWED=yes") {
		t.Errorf("environment:\n%s", out.String())
	}
	var errOut bytes.Buffer
	exit, _ := w.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", ".env"}, Workdir: s.Workdir},
		sandbox.IO{Stderr: &errOut})
	if exit.Code != sandbox.ExitUnsupported || !strings.Contains(errOut.String(), ".env is a denied path") {
		t.Errorf("denied path: %+v %q", exit, errOut.String())
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A path denied inside the workspace asked for is denied at the same
// place in the worktree: local refuses commands naming it there.
func TestDenialsFollowIntoTheWorktree(t *testing.T) {
	dir := repo(t)
	w, _ := backend(t)
	p := policy
	p.DenyRead = []string{filepath.Join(dir, "pkg"), "/home/nobody/.aws"}
	s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "deny", Workspace: dir, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Teardown(context.Background(), s.ID)
	exit, out := run(t, w, s, "cat pkg/a.go")
	if exit.Code != sandbox.ExitUnsupported || !strings.Contains(out, "pkg/a.go is a denied path") {
		t.Errorf("reading a denied path in the worktree: exit %d, %q", exit.Code, out)
	}
	if exit, out := run(t, w, s, "cat README.md"); exit.Code != 0 || out != "ahoy\n" {
		t.Errorf("an ordinary read: exit %d, %q", exit.Code, out)
	}
}
