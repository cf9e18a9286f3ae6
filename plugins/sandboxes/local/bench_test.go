//go:build unix

package local

import (
	"context"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/benchexec"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// BenchmarkExec compares one `true` run bare with the same run through
// the local backend's Exec in a prepared session (workdir and denied-path
// checks, environment, PATH lookup, a process group, output streams
// copied to the caller's writers); the difference is the backend's
// overhead on every command a tool runs.
func BenchmarkExec(b *testing.B) {
	b.Run("bare", benchexec.Bare)
	b.Run("local", func(b *testing.B) {
		l := New()
		s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "bench", Workspace: b.TempDir(),
			Policy: sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env", ".ssh"}, EnvAllowlist: []string{"GOPATH"}}})
		if err != nil {
			b.Fatal(err)
		}
		benchexec.Loop(b, l, s)
	})
}
