//go:build linux

package localhardened

import (
	"context"
	"os"
	"strconv"
	"strings"
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

// BenchmarkSessionRSS measures whether this plugin's memory grows with
// the commands of a session: after 200 commands of warm-up (the Go heap
// reaching its collector's target, code paths paged in), it reports the
// growth of the process's resident set per further command.
func BenchmarkSessionRSS(b *testing.B) {
	h := New()
	ws := b.TempDir()
	s, err := h.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{ReadWritePaths: []string{ws}, DeniedPaths: []string{".git", ".env"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Teardown(context.Background(), s.ID)
	for range 200 {
		benchexec.Run(b, h, s)
	}
	before := residentBytes(b)
	benchexec.Loop(b, h, s)
	b.ReportMetric(float64(residentBytes(b)-before)/float64(b.N), "rss-growth-B/op")
}

// residentBytes is this process's resident set size (VmRSS).
func residentBytes(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
