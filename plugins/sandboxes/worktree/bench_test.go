//go:build unix

package worktree_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/benchexec"
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/worktree"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// benchRepo is a real repository with one commit of a small project.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("init", "--quiet", "-b", "main")
	for i := range 20 {
		p := filepath.Join(dir, fmt.Sprintf("pkg%d/file%d.go", i%4, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package pkg%d\n\nconst N%d = %d\n", i%4, i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("add", "-A")
	run("commit", "--quiet", "-m", "init")
	return dir
}

// benchBackend is a configured backend with its state in a temp dir.
func benchBackend(b *testing.B) *worktree.Worktree {
	b.Helper()
	w := worktree.New()
	if err := w.Configure(context.Background(), plugin.Config{Values: json.RawMessage(`{}`), StateDir: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	return w
}

var benchPolicy = sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env", ".ssh"}, EnvAllowlist: []string{"GOPATH"}}

// BenchmarkExec compares one `true` run bare with the same run through
// the worktree backend in a prepared worktree (the local backend's Exec),
// the overhead on every command a tool runs; and measures Prepare plus
// Teardown of a run that changes nothing (`git worktree add` on a new
// branch, then the status, diff and removal of both), which every run on
// this backend pays once before its first command and once at its end.
func BenchmarkExec(b *testing.B) {
	b.Run("bare", benchexec.Bare)
	b.Run("worktree", func(b *testing.B) {
		w, repo := benchBackend(b), benchRepo(b)
		s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "bench", Workspace: repo, Policy: benchPolicy})
		if err != nil {
			b.Fatal(err)
		}
		benchexec.Loop(b, w, s)
		b.StopTimer()
		if _, err := w.Teardown(context.Background(), s.ID); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("prepare+teardown", func(b *testing.B) {
		w, repo := benchBackend(b), benchRepo(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			s, err := w.Prepare(context.Background(), sandbox.PrepareRequest{RunID: fmt.Sprintf("bench-%d", i), Workspace: repo, Policy: benchPolicy})
			if err != nil {
				b.Fatal(err)
			}
			rel, err := w.Teardown(context.Background(), s.ID)
			if err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(rel.Notice, "no changes") {
				b.Fatalf("teardown of an unchanged run: %q", rel.Notice)
			}
		}
	})
}
