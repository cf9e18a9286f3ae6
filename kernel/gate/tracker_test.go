package gate

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/config"
)

// step is one action on a tracker and the hard stop it must produce.
type step struct {
	do    string // turn, spend, check, ok, fail, escape
	call  Call
	usd   float64
	toks  int64
	want  string // Rule of the expected hard stop, "" for none
	nudge bool
}

// hardStopCase is a tracker and the steps to drive it through.
type hardStopCase struct {
	name    string
	tracker *Tracker
	steps   []step
}

// hardStopCases are TestHardStops's rows.
func hardStopCases() []hardStopCase {
	loop := Call{Tool: "read_file", Arguments: map[string]any{"path": "a.go"}}
	failing := Call{Tool: "shell", Command: "make", Arguments: map[string]any{"command": "make"}}
	other := Call{Tool: "shell", Command: "ls", Arguments: map[string]any{"command": "ls"}}
	turns := func(n int) []step {
		var s []step
		for range n {
			s = append(s, step{do: "turn"})
		}
		return s
	}
	return []hardStopCase{
		{"max turns", NewTracker(3, 0, 0), append(turns(3), step{do: "turn", want: "hard stop: max turns"})},
		{"max turns is capped at 60", NewTracker(500, 0, 0), append(turns(config.MaxTurnsCap), step{do: "turn", want: "hard stop: max turns"})},
		{"zero max turns means 60", TrackerFromConfig(config.Budget{}), append(turns(60), step{do: "turn", want: "hard stop: max turns"})},
		{"usd budget", NewTracker(0, 1.0, 0), []step{{do: "spend", usd: 0.99}, {do: "spend", usd: 1.01, want: "hard stop: budget"}}},
		{"token budget", TrackerFromConfig(config.Budget{MaxTokens: 1000}), []step{{do: "spend", toks: 1000}, {do: "spend", toks: 1001, want: "hard stop: budget"}}},
		{"no budget", NewTracker(0, 0, 0), []step{{do: "spend", usd: 1e6, toks: 1e12}}},
		{"a stop is latched", NewTracker(0, 1, 0), []step{
			{do: "spend", usd: 2, want: "hard stop: budget"},
			{do: "turn", want: "hard stop: budget"},
			{do: "check", call: other, want: "hard stop: budget"},
		}},
		{"identical calls: nudge at 3, stop at 5", NewTracker(0, 0, 0), []step{
			{do: "check", call: loop}, {do: "ok", call: loop},
			{do: "check", call: loop}, {do: "ok", call: loop},
			{do: "check", call: loop}, {do: "ok", call: loop, nudge: true},
			{do: "check", call: loop}, {do: "ok", call: loop},
			{do: "check", call: loop, want: "hard stop: stuck loop"},
		}},
		{"three consecutive failures", NewTracker(0, 0, 0), []step{
			{do: "fail", call: failing}, {do: "ok", call: other}, {do: "fail", call: failing},
			{do: "check", call: other},
			{do: "fail", call: failing, nudge: true, want: "hard stop: repeated failures"},
			{do: "turn", want: "hard stop: repeated failures"},
		}},
		{"a success resets failures", NewTracker(0, 0, 0), []step{
			{do: "fail", call: failing}, {do: "fail", call: failing}, {do: "ok", call: failing, nudge: true},
			{do: "fail", call: failing}, {do: "turn"},
		}},
		{"different arguments are different calls", NewTracker(0, 0, 0), []step{
			{do: "fail", call: failing}, {do: "fail", call: failing}, {do: "fail", call: other}, {do: "check", call: failing},
		}},
		{"sandbox escape", NewTracker(0, 0, 0), []step{{do: "escape", want: "hard stop: sandbox escape"}, {do: "turn", want: "hard stop: sandbox escape"}}},
	}
}

// TestHardStops drives a tracker through each hard stop, one step at a
// time: the step's verdict must match (or merely allow when want is
// empty), and a nudge must appear exactly where expected.
func TestHardStops(t *testing.T) {
	for _, tc := range hardStopCases() {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tracker
			for i, s := range tc.steps {
				var v Verdict
				nudge := ""
				switch s.do {
				case "turn":
					v = tr.Turn()
				case "spend":
					v = tr.Spend(s.usd, s.toks)
				case "check":
					v = tr.Check(s.call)
				case "ok", "fail":
					nudge = tr.Record(s.call, s.do == "fail")
					v, _ = tr.Stopped()
				case "escape":
					v = tr.Escape("process left its namespace")
				}
				if got := hardStopRule(v); got != s.want {
					t.Fatalf("step %d (%s): hard stop %q, want %q (%+v)", i, s.do, got, s.want, v)
				}
				if s.want != "" && (v.Decision != Deny || v.Reason == "") {
					t.Errorf("step %d: hard stop must deny with a reason: %+v", i, v)
				}
				if (nudge != "") != s.nudge {
					t.Errorf("step %d: nudge %q, want nudge %v", i, nudge, s.nudge)
				}
				if nudge != "" && !strings.Contains(nudge, s.call.Tool) {
					t.Errorf("nudge %q does not name the tool", nudge)
				}
			}
		})
	}
}

func hardStopRule(v Verdict) string {
	if !v.HardStop {
		return ""
	}
	return v.Rule
}

func TestTrackerConcurrent(t *testing.T) {
	tr := NewTracker(config.MaxTurnsCap, 0, 0)
	var wg sync.WaitGroup
	verdicts := make([]Verdict, config.MaxTurnsCap)
	for i := range config.MaxTurnsCap {
		wg.Go(func() {
			c := Call{Tool: "t", Arguments: map[string]any{"i": i}}
			tr.Check(c)
			tr.Record(c, true)
			tr.Spend(float64(i), int64(i))
			verdicts[i] = tr.Turn()
		})
	}
	wg.Wait()
	want := make([]Verdict, config.MaxTurnsCap)
	for i := range want {
		want[i] = allowed()
	}
	if d := cmp.Diff(want, verdicts); d != "" {
		t.Errorf("concurrent turns (-want +got):\n%s", d)
	}
	if v := tr.Turn(); v.Rule != "hard stop: max turns" || !strings.Contains(v.Reason, fmt.Sprint(config.MaxTurnsCap)) {
		t.Errorf("turn %d: %+v", config.MaxTurnsCap+1, v)
	}
}
