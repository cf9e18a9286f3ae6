package gate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// benchGate returns a gate under the policy of a typical project: trusted
// mode at 0.5, the default denied paths plus two of the project's own, and
// a few allow, ask and deny rules by tool, path glob and command prefix;
// the workspace is a real directory with the files the calls name.
func benchGate(b *testing.B) *gate.Gate {
	b.Helper()
	ws := b.TempDir()
	for _, f := range []string{"cmd/app/main.go", "internal/store/store.go", "docs/guide.md", "README.md", ".env"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	origin := config.Origin{Source: config.SourceProject, File: filepath.Join(ws, ".sparrow/sparrow.hcl"), Line: 12}
	return gate.New(gate.Policy{
		Mode:        config.ModeTrusted,
		Autonomy:    0.5,
		Workspace:   ws,
		DeniedPaths: []string{"secrets/**", "*.pem"},
		Allow: []config.Rule{
			{Tools: []string{"shell"}, Commands: []string{"go test", "go vet", "make lint"}, Origin: origin},
			{Tools: []string{"write_*", "edit_file"}, Paths: []string{"docs/**"}},
		},
		Ask: []config.Rule{
			{Tools: []string{"shell"}, Commands: []string{"git push", "make release"}},
		},
		Deny: []config.Rule{
			{Tools: []string{"shell"}, Commands: []string{"rm -rf", "make deploy"}, Reason: "for humans", Origin: origin},
			{Tools: []string{"write_*", "edit_file"}, Paths: []string{"vendor/**", "**/*.lock"}},
		},
	})
}

// BenchmarkDecide measures Gate.Decide, which runs on every tool call the
// model proposes, before anything executes: a read_file with a path
// argument (path resolution against the real workspace), a shell command
// line (shell parsing, unwrapping and command-prefix rules) and a call a
// deny rule refuses. Its cost is paid once per call on the path from the
// model's answer to the tool running, so it belongs in the 20 ms budget
// of Sparrow's own work per tool turn.
func BenchmarkDecide(b *testing.B) {
	g := benchGate(b)
	cases := []struct {
		name string
		call gate.Call
		want gate.Decision
	}{
		{"read_file", gate.Call{Tool: "read_file", Risk: tool.RiskReadOnly,
			Arguments:     map[string]any{"path": "internal/store/store.go", "offset": 0.0, "limit": 400.0},
			PathArguments: []string{"path"}}, gate.Allow},
		{"shell", gate.Call{Tool: "shell", Risk: tool.RiskExec,
			Arguments: map[string]any{"command": "go test -race -count=1 ./internal/... 2>&1 | tail -n 50"},
			Command:   "go test -race -count=1 ./internal/... 2>&1 | tail -n 50"}, gate.Allow},
		{"denied", gate.Call{Tool: "shell", Risk: tool.RiskExec,
			Arguments: map[string]any{"command": "cd build && rm -rf ./out"},
			Command:   "cd build && rm -rf ./out"}, gate.Deny},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			if v := g.Decide(tc.call); v.Decision != tc.want {
				b.Fatalf("decision %s (%s: %s), want %s", v.Decision, v.Rule, v.Reason, tc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				g.Decide(tc.call)
			}
		})
	}
}
