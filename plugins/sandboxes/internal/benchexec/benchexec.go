// Package benchexec holds what the sandbox backends' exec benchmarks
// share: the bare baseline and one command run through a backend, so
// each backend's overhead per command is measured the same way.
package benchexec

import (
	"context"
	"io"
	"os/exec"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Bare is the baseline: /bin/true started and waited for directly.
func Bare(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// Run runs /bin/true once through sb in session s, in its workdir, and
// fails b unless it exits 0.
func Run(b *testing.B, sb sandbox.Sandbox, s sandbox.Session) {
	req := sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"/bin/true"}, Workdir: s.Workdir}
	exit, err := sb.Exec(context.Background(), req, sandbox.IO{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil || exit.Code != 0 {
		b.Fatalf("%+v %v", exit, err)
	}
}

// Loop is Run, b.N times.
func Loop(b *testing.B, sb sandbox.Sandbox, s sandbox.Session) {
	b.ReportAllocs()
	for b.Loop() {
		Run(b, sb, s)
	}
}
