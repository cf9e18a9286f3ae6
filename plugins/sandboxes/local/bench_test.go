//go:build unix

package local

import (
	"context"
	"io"
	"os/exec"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// BenchmarkExec compares one `true` run bare with the same run through
// the local backend's Exec in a prepared session (workdir and denied-path
// checks, environment, PATH lookup, a process group, output streams
// copied to the caller's writers); the difference is the backend's
// overhead on every command a tool runs.
func BenchmarkExec(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("local", func(b *testing.B) {
		l := New()
		s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "bench", Workspace: b.TempDir(),
			Policy: sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env", ".ssh"}, EnvAllowlist: []string{"GOPATH"}}})
		if err != nil {
			b.Fatal(err)
		}
		req := sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"/bin/true"}}
		sio := sandbox.IO{Stdout: io.Discard, Stderr: io.Discard}
		b.ReportAllocs()
		for b.Loop() {
			exit, err := l.Exec(context.Background(), req, sio)
			if err != nil || exit.Code != 0 {
				b.Fatalf("%+v %v", exit, err)
			}
		}
	})
}
