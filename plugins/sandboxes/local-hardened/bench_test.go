//go:build linux

package localhardened

import (
	"context"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/benchexec"
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
	b.Run("bare", benchexec.Bare)
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
			if tc.first {
				for b.Loop() {
					s := prepare()
					benchexec.Run(b, h, s)
					if _, err := h.Teardown(context.Background(), s.ID); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			s := prepare()
			defer h.Teardown(context.Background(), s.ID)
			benchexec.Run(b, h, s) // starts the session's sandbox
			benchexec.Loop(b, h, s)
		})
	}
}
