//go:build linux

package localhardened

import (
	"context"
	"os/exec"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// BenchmarkExec compares one `true` run bare with the same run under
// local-hardened: in a sandbox of its own per command ("hardened", as
// before sessions shared one), as a session's 2nd..Nth command
// ("session"), and the session's first command, which starts its
// sandbox ("session-first", with Prepare and Teardown). Each with default
// limits (a cgroup where one can be made) and without limits; the
// difference to bare is the sandbox's overhead per command.
func BenchmarkExec(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name       string
		limits     bool
		perCommand bool
		first      bool
	}{
		{"hardened", true, true, false}, {"hardened-no-limits", false, true, false},
		{"session", true, false, false}, {"session-no-limits", false, false, false},
		{"session-first", true, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := New()
			h.perCommand = tc.perCommand
			if !tc.limits {
				h.cfg.memory, h.cfg.Pids = 0, 0
			}
			ws := b.TempDir()
			prepare := func() sandbox.Session {
				s, err := h.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{ReadWritePaths: []string{ws}, DeniedPaths: []string{".git", ".env"}}})
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
			run := func(s sandbox.Session) {
				exit, err := h.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"/bin/true"}}, sandbox.IO{})
				if err != nil || exit.Code != 0 {
					b.Fatalf("%+v %v", exit, err)
				}
			}
			if tc.first {
				for b.Loop() {
					s := prepare()
					run(s)
					if _, err := h.Teardown(context.Background(), s.ID); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			s := prepare()
			defer h.Teardown(context.Background(), s.ID)
			run(s) // starts the session's sandbox
			for b.Loop() {
				run(s)
			}
		})
	}
}
