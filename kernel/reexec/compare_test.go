package reexec_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/reexec"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// events stamps payloads the way the bus does: Seq from 1, Type from the
// payload, every event in run.
func events(run string, payloads ...event.Payload) []event.Event {
	out := make([]event.Event, len(payloads))
	for i, p := range payloads {
		out[i] = event.Event{SchemaVersion: event.SchemaVersion, RunID: run, AgentID: "main", Seq: uint64(i + 1), Type: p.EventType(), Payload: p}
	}
	return out
}

func TestStepsKeepsWhatARunDid(t *testing.T) {
	tests := []struct {
		name    string
		payload event.Payload
		want    []reexec.Step // Seq is always 1
	}{
		{"assistant message", &event.Message{Role: "assistant", Text: "I'll fix\nthe test."},
			[]reexec.Step{{Type: event.TypeMessage, What: `"I'll fix\nthe test."`}}},
		{"proposed call, arguments compacted", &event.ToolUseProposed{CallID: "c1", Tool: "edit", Arguments: json.RawMessage(`{ "path" : "a.go",  "line": 3 }`), Risk: "low"},
			[]reexec.Step{{Type: event.TypeToolUseProposed, What: `c1 edit {"path":"a.go","line":3}`}}},
		{"proposed call, arguments not JSON", &event.ToolUseProposed{CallID: "c1", Tool: "edit", Arguments: json.RawMessage(`{oops`)},
			[]reexec.Step{{Type: event.TypeToolUseProposed, What: `c1 edit {oops`}}},
		{"approval requested", &event.ApprovalRequested{ApprovalID: "a1", CallID: "c1", Tool: "shell", Summary: "rm -rf build", Risk: "high"},
			[]reexec.Step{{Type: event.TypeApprovalRequested, What: "c1 shell"}}},
		{"approval resolved", &event.ApprovalResolved{ApprovalID: "a1", CallID: "c1", Approved: false, Scope: "once", By: "user"},
			[]reexec.Step{{Type: event.TypeApprovalResolved, What: "c1 approved=false"}}},
		{"call started", &event.ToolUseStarted{CallID: "c1", Tool: "shell", Verdict: event.Verdict{Decision: "allow", Reason: "read-only"}},
			[]reexec.Step{{Type: event.TypeToolUseStarted, What: "c1 shell allow"}}},
		{"final tool output", &event.ToolOutput{CallID: "c1", Text: "ok\n", Final: true, IsError: true, DurationMS: 41},
			[]reexec.Step{{Type: event.TypeToolOutput, What: `c1 error=true "ok\n"`}}},
		{"diff proposed", &event.DiffProposed{CallID: "c2", Path: "a.go", Diff: "-x\n+y\n"},
			[]reexec.Step{{Type: event.TypeDiffProposed, What: "c2 a.go\n-x\n+y\n"}}},
		{"diff applied", &event.DiffApplied{CallID: "c2", Path: "a.go", Diff: "-x\n+y\n", Added: 1, Removed: 1},
			[]reexec.Step{{Type: event.TypeDiffApplied, What: "c2 a.go\n-x\n+y\n"}}},
		{"checkpoint, id left out", &event.CheckpointCreated{ID: "20260101-120000-abcdef-2", Ref: "refs/sparrow/checkpoints/20260101-120000-abcdef-2", Turn: 2, Tool: "edit", Reason: "edit a.go"},
			[]reexec.Step{{Type: event.TypeCheckpointCreated, What: `turn 2 edit "edit a.go"`}}},
		{"verify result, output and timing left out", &event.TestResult{Command: []string{"go", "test", "./..."}, ExitCode: 1, Output: "FAIL", DurationMS: 900, Attempt: 2},
			[]reexec.Step{{Type: event.TypeTestResult, What: `["go" "test" "./..."] exit 1 passed=false`}}},
		{"error", &event.Error{Message: "rate limited", Source: "provider", Class: "rate_limit", Fatal: true},
			[]reexec.Step{{Type: event.TypeError, What: "provider fatal=true rate limited"}}},
		{"outcome, cost and timing left out", &event.RunFinished{Status: event.StatusCompleted, Turns: 3, DurationMS: 1234, CostUSD: 0.5, InputTokens: 10, FilesChanged: []string{"a.go", "b.go"}},
			[]reexec.Step{{Type: event.TypeRunFinished, What: "completed turns=3 files=[a.go b.go]"}}},

		{"streamed message piece", &event.Message{Role: "assistant", Text: "I'll", Delta: true}, nil},
		{"user message", &event.Message{Role: "user", Text: "fix the test"}, nil},
		{"streamed tool output", &event.ToolOutput{CallID: "c1", Text: "ok\n"}, nil},
		{"run started", &event.RunStarted{Task: "fix", Workspace: "/w", Model: "m"}, nil},
		{"route selected", &event.RouteSelected{Model: "m", Provider: "p", Reason: "first"}, nil},
		{"model switched", &event.ModelSwitched{From: "a", To: "b", Reason: "overloaded"}, nil},
		{"thinking", &event.ThinkingDelta{Text: "hmm"}, nil},
		{"agent spawned", &event.AgentSpawned{AgentID: "sub", Parent: "main", Task: "t"}, nil},
		{"agent status", &event.AgentStatus{AgentID: "sub", Status: "done"}, nil},
		{"compacted", &event.Compacted{BeforeChars: 10, AfterChars: 5}, nil},
		{"skill learned", &event.SkillLearned{Name: "s"}, nil},
		{"cost", &event.CostUpdate{Model: "m", TurnUSD: 0.1, TotalUSD: 0.2, Priced: true}, nil},
		{"tokens", &event.TokenUsage{Model: "m", Input: 5, Output: 6}, nil},
		{"autonomy", &event.AutonomyChanged{From: 0.2, To: 0.8, By: "user"}, nil},
		{"unknown type from a newer Sparrow", &event.Unknown{Name: "Teleported", Data: json.RawMessage(`{}`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.want {
				tt.want[i].Seq = 1
			}
			got := reexec.Steps(events("r", tt.payload), nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Steps (-want +got):\n%s", diff)
			}
		})
	}
}

// recordedRun and freshRun are the same run: the fresh one worked in
// another directory under another run id, and streamed differently.
const (
	recordedWS  = "/home/u/project"
	recordedRun = "20260101-120000-aaaaaa"
	freshWS     = "/tmp/sparrow-replay-20260101-120000-aaaaaa-42/workspace"
	freshRun    = "20260301-090000-bbbbbb"
)

func run(ws, id string, extra ...event.Payload) []event.Event {
	ps := []event.Payload{
		&event.RunStarted{Task: "fix the test", Workspace: ws},
		&event.Message{Role: "assistant", Text: "Looking", Delta: true},
		&event.Message{Role: "assistant", Text: "Looking at " + ws + "/a_test.go"},
		&event.ToolUseProposed{CallID: "c1", Tool: "read", Arguments: json.RawMessage(`{"path":"` + ws + `/a_test.go"}`)},
		&event.ToolUseStarted{CallID: "c1", Tool: "read", Verdict: event.Verdict{Decision: "allow"}},
		&event.ToolOutput{CallID: "c1", Text: "package a"},
		&event.ToolOutput{CallID: "c1", Text: "package a\n", Final: true},
	}
	ps = append(ps, extra...)
	ps = append(ps,
		&event.CheckpointCreated{ID: id + "-2", Ref: "refs/sparrow/checkpoints/" + id + "-2", Turn: 1, Tool: "edit", Reason: "edit " + ws + "/a.go"},
		&event.ToolOutput{CallID: "c2", Text: "wrote " + ws + "/a.go (run " + id + ")", Final: true},
		&event.TokenUsage{Model: "m", Input: 10, Output: 3},
		&event.RunFinished{Status: event.StatusCompleted, Turns: 2, DurationMS: 77, FilesChanged: []string{"a.go"}},
	)
	return events(id, ps...)
}

func TestStepsRewriteMakesEqualRunsCompareEqual(t *testing.T) {
	recorded := reexec.Steps(run(recordedWS, recordedRun), nil)
	// Timing, streaming and token events of the fresh run differ: they
	// shift sequence numbers but are no steps.
	fresh := run(freshWS, freshRun, &event.TokenUsage{Model: "m", Input: 1}, &event.CostUpdate{TotalUSD: 1})

	if d := reexec.Compare(recorded, reexec.Steps(fresh, nil)); d == nil {
		t.Fatal("without a rewrite the fresh run's paths and run id should differ from the recording's")
	}
	rewrite := reexec.Replacer(freshWS, recordedWS, freshRun, recordedRun)
	got := reexec.Steps(fresh, rewrite)
	if d := reexec.Compare(recorded, got); d != nil {
		t.Fatalf("rewritten fresh run diverges at %d:\n  recorded: %v\n  fresh:    %v", d.Index, d.Recorded, d.Fresh)
	}
	for _, s := range got {
		if strings.Contains(s.What, freshWS) || strings.Contains(s.What, freshRun) {
			t.Errorf("step still names the fresh run: %s", s)
		}
	}
	want := `c2 error=false "wrote /home/u/project/a.go (run 20260101-120000-aaaaaa)"`
	if s := got[len(got)-2]; s.What != want {
		t.Errorf("tool output step = %q, want %q", s.What, want)
	}
}

func TestReplacer(t *testing.T) {
	tests := []struct {
		name                 string
		fws, rws, frun, rrun string
		in, want             string
	}{
		{"both", freshWS, recordedWS, freshRun, recordedRun,
			"cd " + freshWS + "/sub && echo " + freshRun, "cd " + recordedWS + "/sub && echo " + recordedRun},
		{"workspace only", freshWS, recordedWS, "", recordedRun,
			freshWS + " " + freshRun, recordedWS + " " + freshRun},
		{"run only", "", recordedWS, freshRun, recordedRun,
			freshWS + " " + freshRun, freshWS + " " + recordedRun},
		{"nothing known", "", "", "", "", "unchanged " + freshWS, "unchanged " + freshWS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reexec.Replacer(tt.fws, tt.rws, tt.frun, tt.rrun)(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	steps := func(outputs ...string) []reexec.Step {
		ps := []event.Payload{&event.ToolUseProposed{CallID: "c1", Tool: "shell", Arguments: json.RawMessage(`{"cmd":"go test"}`)}}
		for _, o := range outputs {
			ps = append(ps, &event.ToolOutput{CallID: "c1", Text: o, Final: true})
		}
		return reexec.Steps(events("r", ps...), nil)
	}
	recorded := steps("ok", "PASS")
	tests := []struct {
		name  string
		fresh []reexec.Step
		// want is nil when the runs agree; otherwise the index and the
		// What of each side ("" for a run that had ended).
		want                    *reexec.Divergence
		wantRecorded, wantFresh string
	}{
		{name: "identical", fresh: steps("ok", "PASS")},
		{name: "different tool output", fresh: steps("ok", "FAIL"),
			want: &reexec.Divergence{Index: 2}, wantRecorded: `c1 error=false "PASS"`, wantFresh: `c1 error=false "FAIL"`},
		{name: "fresh run stops early", fresh: steps("ok"),
			want: &reexec.Divergence{Index: 2}, wantRecorded: `c1 error=false "PASS"`},
		{name: "fresh run goes on", fresh: steps("ok", "PASS", "again"),
			want: &reexec.Divergence{Index: 3}, wantFresh: `c1 error=false "again"`},
		{name: "fresh run did nothing", fresh: nil,
			want: &reexec.Divergence{Index: 0}, wantRecorded: `c1 shell {"cmd":"go test"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := reexec.Compare(recorded, tt.fresh)
			if tt.want == nil {
				if d != nil {
					t.Fatalf("Compare = divergence at %d (%v / %v), want none", d.Index, d.Recorded, d.Fresh)
				}
				return
			}
			if d == nil {
				t.Fatalf("Compare = nil, want a divergence at %d", tt.want.Index)
			}
			if d.Index != tt.want.Index {
				t.Errorf("Index = %d, want %d", d.Index, tt.want.Index)
			}
			check := func(side string, got *reexec.Step, want string) {
				t.Helper()
				switch {
				case want == "" && got != nil:
					t.Errorf("%s = %v, want nil (that run had ended)", side, got)
				case want != "" && got == nil:
					t.Errorf("%s = nil, want %q", side, want)
				case want != "" && got.What != want:
					t.Errorf("%s.What = %q, want %q", side, got.What, want)
				}
			}
			check("Recorded", d.Recorded, tt.wantRecorded)
			check("Fresh", d.Fresh, tt.wantFresh)
			if d.Recorded != nil && *d.Recorded != recorded[d.Index] {
				t.Errorf("Recorded = %v, want the recording's step %d %v", d.Recorded, d.Index, recorded[d.Index])
			}
		})
	}
}

func TestCompareTypeMatters(t *testing.T) {
	// Same description, different kind of step: a proposed diff that was
	// never applied is not the same run.
	recorded := []reexec.Step{{Seq: 4, Type: event.TypeDiffApplied, What: "c1 a.go\n+x\n"}}
	fresh := []reexec.Step{{Seq: 4, Type: event.TypeDiffProposed, What: "c1 a.go\n+x\n"}}
	if d := reexec.Compare(recorded, fresh); d == nil || d.Index != 0 {
		t.Fatalf("Compare = %+v, want a divergence at 0", d)
	}
}

func TestStepString(t *testing.T) {
	s := reexec.Step{Seq: 12, Type: event.TypeToolOutput, What: `c1 error=false "ok"`}
	if got, want := s.String(), `ToolOutput #12: c1 error=false "ok"`; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}

	// A long output is clipped, and never in the middle of a character.
	for _, pad := range []int{0, 1, 2} {
		long := reexec.Step{Seq: 3, Type: event.TypeToolOutput, What: strings.Repeat("x", pad) + strings.Repeat("✓", 200)}
		got := long.String()
		if !strings.HasSuffix(got, "…") {
			t.Errorf("pad %d: long step not clipped: %d bytes", pad, len(got))
		}
		if len(got) > len("ToolOutput #3: ")+300+len("…") {
			t.Errorf("pad %d: clipped step is %d bytes, want at most 300 of What", pad, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("pad %d: clipped step is not valid UTF-8: %q", pad, got[len(got)-8:])
		}
	}
}
