package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

var allRisks = []tool.Risk{tool.RiskReadOnly, tool.RiskMutating, tool.RiskExec, tool.RiskNetwork, tool.RiskDestructive}

// decideCase is one row of TestDecide. policy.Workspace is filled in.
type decideCase struct {
	name   string
	policy Policy
	call   Call
	want   Verdict
	// reason, when set, must be contained in the verdict's Reason.
	reason string
}

// grid holds the expected verdict codes per mode and level, one per risk
// in allRisks order: a allow, q ask, d deny; c NeedsCheckpoint, n Notify,
// ! HardStop.
var grid = map[string]map[float64]string{
	config.ModeEmergencyStop: {0.1: "d! d! d! d! d!", 0.5: "d! d! d! d! d!", 0.9: "d! d! d! d! d!"},
	config.ModeReadOnly:      {0.1: "a d d d d", 0.5: "a d d d d", 0.9: "a d d d d"},
	config.ModePlan:          {0.1: "a d d d d", 0.5: "a d d d d", 0.9: "a d d d d"},
	config.ModeSupervised:    {0.1: "a qc qc q qc", 0.5: "a qc qc q qc", 0.9: "a qc qc q qc"},
	config.ModeTrusted:       {0.1: "a qc qc q qc", 0.5: "a ac ac q qc", 0.9: "a ac ac q qc"},
	config.ModeAutonomous:    {0.1: "a qc qc q qc", 0.5: "a ac ac q qc", 0.9: "a ac ac a acn"},
	"":                       {0.1: "a qc qc q qc", 0.5: "a ac ac q qc", 0.9: "a ac ac a acn"},
}

// gridCases expands the grid into rows: every mode × level × risk.
func gridCases() []decideCase {
	var out []decideCase
	for mode, levels := range grid {
		for level, codes := range levels {
			for i, code := range strings.Fields(codes) {
				r := allRisks[i]
				want := Verdict{Risk: r, NeedsCheckpoint: strings.Contains(code, "c"),
					Notify: strings.Contains(code, "n"), HardStop: strings.Contains(code, "!")}
				want.Decision = map[byte]Decision{'a': Allow, 'q': Ask, 'd': Deny}[code[0]]
				want.Network = r == tool.RiskNetwork && want.Decision != Deny
				switch {
				case want.Decision == Deny:
					want.Rule = "mode " + mode
				default:
					eff := EffectiveAutonomy(mode, level)
					want.Rule = fmt.Sprintf("autonomy %.2f × %s", eff, r)
					if eff < level {
						want.Rule += " (capped by mode " + mode + ")"
					}
				}
				out = append(out, decideCase{
					name:   fmt.Sprintf("grid %q %.1f %s", mode, level, r),
					policy: Policy{Mode: mode, Autonomy: level},
					call:   Call{Tool: "t", Risk: r},
					want:   want,
				})
			}
		}
	}
	return out
}

// workspace builds a workspace with a symlink pointing out, one pointing
// at .env, a dangling one pointing out, and an outside directory.
func workspace(t *testing.T) (ws, outside string) {
	t.Helper()
	ws, outside = t.TempDir(), t.TempDir()
	for _, d := range []string{"src", "docs", "secrets/prod", ".git"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"escape":    outside,
		"notes.txt": ".env",
		"cfg":       ".git",
		"dangling":  filepath.Join(outside, "new-file"),
		"loop":      "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=1"), 0o600); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

// TestDecide covers every mode × level × risk, rules, paths and shell
// analysis through Gate.Decide.
func TestDecide(t *testing.T) {
	ws, outside := workspace(t)
	cases := gridCases()
	cases = append(cases, ruleCases(ws)...)
	cases = append(cases, pathCases(ws, outside)...)
	cases = append(cases, shellCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.policy
			p.Workspace = ws
			got := New(p).Decide(tc.call)
			if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Verdict{}, "Reason")); d != "" {
				t.Errorf("verdict (-want +got):\n%s\nreason: %s", d, got.Reason)
			}
			if got.Reason == "" {
				t.Errorf("verdict without a reason: %+v", got)
			}
			if tc.reason != "" && !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tc.reason)
			}
		})
	}
}

// withNetwork marks a verdict as one for a call that reaches the network.
func withNetwork(v Verdict) Verdict { v.Network = true; return v }

func shellCall(cmd string) Call { return Call{Tool: "shell", Risk: tool.RiskExec, Command: cmd} }

func pathCall(toolName string, r tool.Risk, p string) Call {
	return Call{Tool: toolName, Risk: r, Arguments: map[string]any{"path": p}, PathArguments: []string{"path"}}
}

func ruleCases(ws string) []decideCase {
	hcl := config.Origin{Source: config.SourceProject, File: "/p/.sparrow/sparrow.hcl", Line: 14}
	user := config.Origin{Source: config.SourceUser, File: "/home/u/.config/sparrow/sparrow.hcl", Line: 3}
	rules := Policy{Mode: config.ModeSupervised, Autonomy: 0.2,
		Allow: []config.Rule{
			{Tools: []string{"shell"}, Commands: []string{"go test", "make"}, Origin: user},
			{Tools: []string{"write_*"}, Paths: []string{"docs/**"}},
			{Tools: []string{"shell"}, Commands: []string{"go"}},
			{Paths: []string{filepath.Join(ws, "src") + "/*.go"}},
			{},
		},
		Ask: []config.Rule{
			{Tools: []string{"read_file"}, Paths: []string{"secrets/**"}},
			{Surfaces: []string{"telegram"}},
			{Commands: []string{"make release"}},
		},
		Deny: []config.Rule{
			{Providers: []string{"ollama"}, Tools: []string{"shell"}},
			{Commands: []string{"make deploy", "rm -rf"}, Reason: "deploys and recursive deletes are for humans", Origin: hcl},
		},
	}
	trusted := rules
	trusted.Mode, trusted.Autonomy = config.ModeTrusted, 0.5
	readOnly := rules
	readOnly.Mode = config.ModeReadOnly
	v := func(d Decision, r tool.Risk, rule string, cp bool) Verdict {
		return Verdict{Decision: d, Risk: r, Rule: rule, NeedsCheckpoint: cp}
	}
	return []decideCase{
		{name: "allow rule beats the dial", policy: rules, call: shellCall("go test ./..."),
			want: v(Allow, tool.RiskExec, "allow rule #1 (sparrow.hcl:3)", true)},
		{name: "allow rule must cover every command", policy: rules, call: shellCall("go test ./... && curl -s x.example"),
			want: withNetwork(v(Ask, tool.RiskNetwork, "autonomy 0.20 × network", true))},
		{name: "allow rules in order: first match", policy: rules, call: shellCall("make build"),
			want: v(Allow, tool.RiskExec, "allow rule #1 (sparrow.hcl:3)", true)},
		{name: "a later allow rule", policy: rules, call: shellCall("go vet ./..."),
			want: v(Allow, tool.RiskExec, "allow rule #3", true)},
		{name: "prefix is word-wise", policy: rules, call: shellCall("maker"),
			want: v(Ask, tool.RiskExec, "autonomy 0.20 × exec", true)},
		{name: "deny wins over allow", policy: rules, call: shellCall("make build && make deploy"),
			want: v(Deny, tool.RiskExec, "deny rule #2 (sparrow.hcl:14)", false), reason: "for humans"},
		{name: "deny matches unwrapped commands", policy: trusted, call: shellCall("sudo env X=1 rm -rf build"),
			want: v(Deny, tool.RiskDestructive, "deny rule #2 (sparrow.hcl:14)", false)},
		{name: "deny matches inside sh -c", policy: trusted, call: shellCall(`bash -c "make deploy"`),
			want: v(Deny, tool.RiskExec, "deny rule #2 (sparrow.hcl:14)", false)},
		{name: "ask wins over allow", policy: trusted, call: shellCall("make release"),
			want: v(Ask, tool.RiskExec, "ask rule #3", true)},
		{name: "deny rule with two fields: both match", policy: trusted, call: Call{Tool: "shell", Risk: tool.RiskExec, Command: "ls", Provider: "ollama"},
			want: v(Deny, tool.RiskReadOnly, "deny rule #1", false)},
		{name: "deny rule with two fields: one matches", policy: trusted, call: Call{Tool: "read_file", Risk: tool.RiskReadOnly, Provider: "ollama"},
			want: v(Allow, tool.RiskReadOnly, "autonomy 0.50 × read-only", false)},
		{name: "surface rule", policy: trusted, call: Call{Tool: "write_file", Risk: tool.RiskMutating, Surface: "telegram"},
			want: v(Ask, tool.RiskMutating, "ask rule #2", true)},
		{name: "path rule with ** and tool glob", policy: rules, call: pathCall("write_file", tool.RiskMutating, "docs/a/b.md"),
			want: v(Allow, tool.RiskMutating, "allow rule #2", true)},
		{name: "path rule: other path", policy: rules, call: pathCall("write_file", tool.RiskMutating, "README.md"),
			want: v(Ask, tool.RiskMutating, "autonomy 0.20 × mutating", true)},
		{name: "path rule: other tool", policy: rules, call: pathCall("delete_file", tool.RiskDestructive, "docs/a.md"),
			want: v(Ask, tool.RiskDestructive, "autonomy 0.20 × destructive", true)},
		{name: "absolute path glob", policy: rules, call: pathCall("edit_file", tool.RiskMutating, "src/main.go"),
			want: v(Allow, tool.RiskMutating, "allow rule #4", true)},
		{name: "ask rule on a read", policy: trusted, call: pathCall("read_file", tool.RiskReadOnly, "secrets/prod/db.txt"),
			want: v(Ask, tool.RiskReadOnly, "ask rule #1", false)},
		{name: "mode read-only before allow rules", policy: readOnly, call: shellCall("go test ./..."),
			want: v(Deny, tool.RiskExec, "mode read-only", false)},
		{name: "read-only mode allows read-only commands", policy: readOnly, call: shellCall("git status && git diff | head"),
			want: v(Allow, tool.RiskReadOnly, "autonomy 0.20 × read-only", false)},
		{name: "allowed destructive notifies", policy: Policy{Autonomy: 0.1, Allow: []config.Rule{{Tools: []string{"shell"}}}},
			call: shellCall("rm -rf build"), want: Verdict{Decision: Allow, Risk: tool.RiskDestructive, Rule: "allow rule #1", NeedsCheckpoint: true, Notify: true}},
	}
}

func pathCases(ws, outside string) []decideCase {
	auto := Policy{Mode: config.ModeAutonomous, Autonomy: 0.9, DeniedPaths: []string{"*.pem", "secrets/prod"}}
	deny := func(r tool.Risk, rule string) Verdict { return Verdict{Decision: Deny, Risk: r, Rule: rule} }
	stop := Verdict{Decision: Deny, Risk: tool.RiskMutating, Rule: "hard stop: write outside workspace", HardStop: true}
	allowW := Verdict{Decision: Allow, Risk: tool.RiskMutating, Rule: "autonomy 0.90 × mutating", NeedsCheckpoint: true}
	allowR := Verdict{Decision: Allow, Risk: tool.RiskReadOnly, Rule: "autonomy 0.90 × read-only"}
	c := func(name string, r tool.Risk, p string, want Verdict) decideCase {
		return decideCase{name: name, policy: auto, call: pathCall("fs", r, p), want: want}
	}
	return []decideCase{
		c("relative inside", tool.RiskMutating, "src/main.go", allowW),
		c("absolute inside", tool.RiskReadOnly, filepath.Join(ws, "src/main.go"), allowR),
		c("new file inside", tool.RiskMutating, "src/new/dir/x.go", allowW),
		c("read via ..", tool.RiskReadOnly, "../x", deny(tool.RiskReadOnly, "outside workspace")),
		c("write via ..", tool.RiskMutating, "src/../../x", stop),
		c("read via symlink out", tool.RiskReadOnly, "escape/x", deny(tool.RiskReadOnly, "outside workspace")),
		c("write via symlink out", tool.RiskMutating, "escape/x", stop),
		c("write via dangling symlink out", tool.RiskMutating, "dangling", stop),
		c("symlink then ..", tool.RiskReadOnly, "escape/../y", deny(tool.RiskReadOnly, "outside workspace")),
		c("symlink loop", tool.RiskReadOnly, "loop/x", deny(tool.RiskReadOnly, "outside workspace")),
		c("destructive outside", tool.RiskDestructive, outside, Verdict{Decision: Deny, Risk: tool.RiskDestructive, Rule: "hard stop: write outside workspace", HardStop: true}),
		c("absolute outside", tool.RiskReadOnly, "/etc/passwd", deny(tool.RiskReadOnly, "outside workspace")),
		c("home ssh key", tool.RiskReadOnly, "~/.ssh/id_rsa", deny(tool.RiskReadOnly, "default denied path .ssh")),
		c(".env", tool.RiskReadOnly, ".env", deny(tool.RiskReadOnly, "default denied path .env")),
		c("nested .env.local", tool.RiskReadOnly, "src/.env.local", deny(tool.RiskReadOnly, "default denied path .env.local")),
		c(".git/config write is denied, not a hard stop", tool.RiskMutating, ".git/config", deny(tool.RiskMutating, "default denied path .git")),
		c("id_ed25519", tool.RiskReadOnly, "keys/id_ed25519", deny(tool.RiskReadOnly, "default denied path id_ed25519")),
		c("denied via symlink to .env", tool.RiskReadOnly, "notes.txt", deny(tool.RiskReadOnly, "default denied path .env")),
		c("denied via symlink to .git", tool.RiskMutating, "cfg/config", deny(tool.RiskMutating, "default denied path .git")),
		c("denied via ..", tool.RiskReadOnly, "src/../.env", deny(tool.RiskReadOnly, "default denied path .env")),
		c("configured glob", tool.RiskReadOnly, "certs/server.pem", deny(tool.RiskReadOnly, "denied path *.pem")),
		c("configured path prefix", tool.RiskReadOnly, "secrets/prod/key", deny(tool.RiskReadOnly, "denied path secrets/prod")),
		c("similar names are fine", tool.RiskReadOnly, "src/environment.go", allowR),
		c(".gitignore is fine", tool.RiskMutating, ".gitignore", allowW),
		{name: "list of paths", policy: auto, call: Call{Tool: "fs", Risk: tool.RiskReadOnly,
			Arguments: map[string]any{"paths": []any{"a.go", "src/.env"}}, PathArguments: []string{"paths"}},
			want: deny(tool.RiskReadOnly, "default denied path .env")},
		{name: "shell workdir outside, exec", policy: auto, call: Call{Tool: "shell", Risk: tool.RiskExec, Command: "make",
			Arguments: map[string]any{"command": "make", "workdir": "../.."}, PathArguments: []string{"workdir"}},
			want: deny(tool.RiskExec, "outside workspace")},
		{name: "shell workdir outside, destructive", policy: auto, call: Call{Tool: "shell", Risk: tool.RiskExec, Command: "rm -rf x", Workdir: outside},
			want: Verdict{Decision: Deny, Risk: tool.RiskDestructive, Rule: "hard stop: write outside workspace", HardStop: true}},
		{name: "shell workdir .git", policy: auto, call: Call{Tool: "shell", Risk: tool.RiskExec, Command: "ls", Workdir: ".git"},
			want: deny(tool.RiskReadOnly, "default denied path .git")},
	}
}

func shellCases() []decideCase {
	trusted := Policy{Mode: config.ModeTrusted, Autonomy: 0.5, DeniedPaths: config.DefaultDeniedPaths()}
	auto := Policy{Mode: config.ModeAutonomous, Autonomy: 0.9}
	ro := Policy{Mode: config.ModeReadOnly, Autonomy: 0.9}
	deny := func(r tool.Risk, rule string) Verdict { return Verdict{Decision: Deny, Risk: r, Rule: rule} }
	s := func(name string, p Policy, cmd string, want Verdict) decideCase {
		return decideCase{name: name, policy: p, call: shellCall(cmd), want: want}
	}
	return []decideCase{
		s("cat .env", trusted, "cat .env | grep KEY", deny(tool.RiskReadOnly, "default denied path .env")),
		s("input redirect from .env", trusted, "wc -l < src/.env", deny(tool.RiskReadOnly, "default denied path .env")),
		s("home ssh key in a word", trusted, "cat $HOME/.ssh/id_rsa", deny(tool.RiskReadOnly, "default denied path .ssh")),
		s("option value", trusted, "docker run --env-file=.env app", deny(tool.RiskExec, "default denied path .env")),
		s("nested sh -c", trusted, `sh -c "cat .env"`, deny(tool.RiskReadOnly, "default denied path .env")),
		s("exclude-dir .git is fine", trusted, "grep -rn TODO --exclude-dir=.git .",
			Verdict{Decision: Allow, Risk: tool.RiskReadOnly, Rule: "autonomy 0.50 × read-only"}),
		s("trusted asks before destructive", trusted, "rm -rf build",
			Verdict{Decision: Ask, Risk: tool.RiskDestructive, Rule: "autonomy 0.50 × destructive", NeedsCheckpoint: true}),
		s("trusted allows a write", trusted, "echo hi > f.txt",
			Verdict{Decision: Allow, Risk: tool.RiskMutating, Rule: "autonomy 0.50 × mutating", NeedsCheckpoint: true}),
		s("network command line is checkpointed", auto, "npm install",
			Verdict{Decision: Allow, Risk: tool.RiskNetwork, Rule: "autonomy 0.90 × network", NeedsCheckpoint: true, Network: true}),
		s("a network command under a higher risk still needs the network", auto, "git pull && rm -rf build",
			Verdict{Decision: Allow, Risk: tool.RiskDestructive, Rule: "autonomy 0.90 × destructive", NeedsCheckpoint: true, Notify: true, Network: true}),
		s("asking keeps the network need for after approval", trusted, "curl -O https://example.com/x.tgz",
			Verdict{Decision: Ask, Risk: tool.RiskNetwork, Rule: "autonomy 0.50 × network", NeedsCheckpoint: true, Network: true}),
		s("a denied network call gets none", ro, "git fetch", deny(tool.RiskNetwork, "mode read-only")),
		s("a local command gets none", auto, "go build ./...",
			Verdict{Decision: Allow, Risk: tool.RiskExec, Rule: "autonomy 0.90 × exec", NeedsCheckpoint: true}),
		s("unparsable: never allowed without a person", auto, `rm -rf "`,
			Verdict{Decision: Ask, Risk: tool.RiskDestructive, Rule: "shell analysis: cannot parse", NeedsCheckpoint: true}),
		s("unparsable in read-only mode", ro, `ls "`, deny(tool.RiskDestructive, "mode read-only")),
		s("unparsable still checks denied paths", auto, `cat .env "`, deny(tool.RiskDestructive, "default denied path .env")),
		{name: "declared risk other than exec is a floor", policy: auto,
			call: Call{Tool: "remote_shell", Risk: tool.RiskNetwork, Command: "ls"},
			want: Verdict{Decision: Allow, Risk: tool.RiskNetwork, Rule: "autonomy 0.90 × network", NeedsCheckpoint: true, Network: true}},
	}
}

func TestSetAutonomy(t *testing.T) {
	g := New(Policy{Autonomy: 0.1, Workspace: t.TempDir()})
	call := Call{Tool: "write", Risk: tool.RiskMutating}
	steps := []struct {
		level    float64
		want     float64
		decision Decision
	}{{0.1, 0.1, Ask}, {0.5, 0.5, Allow}, {7, 1, Allow}, {-1, 0, Ask}}
	for _, s := range steps {
		g.SetAutonomy(s.level)
		if got := g.Autonomy(); got != s.want {
			t.Errorf("SetAutonomy(%v): level %v, want %v", s.level, got, s.want)
		}
		if v := g.Decide(call); v.Decision != s.decision {
			t.Errorf("at %v: %s, want %s", s.level, v.Decision, s.decision)
		}
	}
}

func TestPolicyFromConfig(t *testing.T) {
	rule := config.Rule{Tools: []string{"shell"}}
	cfg := &config.Config{
		Permissions: config.Permissions{Mode: config.ModeSupervised, DeniedPaths: []string{"*.pem"}, Deny: []config.Rule{rule}},
		Autonomy:    config.Autonomy{Level: 0.8},
		Origins:     map[string]config.Origin{"permissions.mode": {Source: config.SourceDefault}},
	}
	want := Policy{Autonomy: 0.8, Workspace: "/ws", DeniedPaths: []string{"*.pem"}, Deny: []config.Rule{rule}}
	if d := cmp.Diff(want, PolicyFromConfig(cfg, "/ws")); d != "" {
		t.Errorf("default mode (-want +got):\n%s", d)
	}
	cfg.Origins["permissions.mode"] = config.Origin{Source: config.SourceFlag, Flag: "mode"}
	want.Mode = config.ModeSupervised
	if d := cmp.Diff(want, PolicyFromConfig(cfg, "/ws")); d != "" {
		t.Errorf("mode from a flag (-want +got):\n%s", d)
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"docs/**", "docs", true},
		{"docs/**", "docs/a/b.md", true},
		{"docs/**", "docsx/a", false},
		{"**/*.pem", "k.pem", true},
		{"**/*.pem", "a/b/k.pem", true},
		{"src/**/test_*.py", "src/a/b/test_x.py", true},
		{"src/**/test_*.py", "src/test_x.py", true},
		{"src/*.go", "src/a/b.go", false},
		{"[^.]*", ".env", false},
		{"[^.]*", "env", true},
		{"**/[z-a]", "x/z", false}, // malformed (reversed range): matches nothing
	}
	for _, tc := range cases {
		// Compiled when matched, and compiled up front as a gate does.
		for _, gs := range []globs{{}, compileGlobs([]string{tc.glob})} {
			if got := gs.match(tc.glob, tc.path); got != tc.want {
				t.Errorf("match(%q, %q) with %d compiled = %v, want %v", tc.glob, tc.path, len(gs), got, tc.want)
			}
		}
	}
}
