//go:build linux

package localhardened

import (
	"context"
	"os/exec"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// BenchmarkExec compares one `true` run bare with the same run under
// local-hardened, default limits (a cgroup where one can be made) and
// without limits; the difference is the sandbox's overhead per command.
func BenchmarkExec(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name   string
		limits bool
	}{{"hardened", true}, {"hardened-no-limits", false}} {
		b.Run(tc.name, func(b *testing.B) {
			h := New()
			if !tc.limits {
				h.cfg.memory, h.cfg.Pids = 0, 0
			}
			ws := b.TempDir()
			s, err := h.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{ReadWritePaths: []string{ws}, DeniedPaths: []string{".git", ".env"}}})
			if err != nil {
				b.Fatal(err)
			}
			req := sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"/bin/true"}}
			for b.Loop() {
				exit, err := h.Exec(context.Background(), req, sandbox.IO{})
				if err != nil || exit.Code != 0 {
					b.Fatalf("%+v %v", exit, err)
				}
			}
		})
	}
}
