package reexec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// Step is one thing a run did that a re-execution must do again: a call
// proposed, approved, run and answered, a diff, a checkpoint, a message,
// a verify result, an error, the outcome. Streaming pieces, timings,
// tokens, costs and ids that differ by nature are left out.
type Step struct {
	// Seq is the event's sequence number in its run.
	Seq  uint64
	Type event.Type
	// What describes the step; two runs agree on a step when Type and What
	// are equal.
	What string
}

// String is "ToolOutput #12: …".
func (s Step) String() string { return fmt.Sprintf("%s #%d: %s", s.Type, s.Seq, clip(s.What, 300)) }

// Divergence is where a re-execution first differs from its recording.
// A nil Recorded or Fresh means that run had already ended.
type Divergence struct {
	Index           int
	Recorded, Fresh *Step
}

// Steps reduces events to the steps a re-execution is compared on. Every
// string passes through rewrite first, so paths and ids that name the
// run's own workspace or run can be made to agree.
func Steps(events []event.Event, rewrite func(string) string) []Step {
	if rewrite == nil {
		rewrite = func(s string) string { return s }
	}
	var out []Step
	add := func(e event.Event, format string, args ...any) {
		out = append(out, Step{Seq: e.Seq, Type: e.Type, What: rewrite(fmt.Sprintf(format, args...))})
	}
	for _, e := range events {
		switch p := e.Payload.(type) {
		case *event.Message:
			if !p.Delta && p.Role == "assistant" {
				add(e, "%q", p.Text)
			}
		case *event.ToolUseProposed:
			add(e, "%s %s %s", p.CallID, p.Tool, compact(p.Arguments))
		case *event.ApprovalRequested:
			add(e, "%s %s", p.CallID, p.Tool)
		case *event.ApprovalResolved:
			add(e, "%s approved=%v", p.CallID, p.Approved)
		case *event.ToolUseStarted:
			add(e, "%s %s %s", p.CallID, p.Tool, p.Verdict.Decision)
		case *event.ToolOutput:
			if p.Final {
				add(e, "%s error=%v %q", p.CallID, p.IsError, p.Text)
			}
		case *event.DiffProposed:
			add(e, "%s %s\n%s", p.CallID, p.Path, p.Diff)
		case *event.DiffApplied:
			add(e, "%s %s\n%s", p.CallID, p.Path, p.Diff)
		case *event.CheckpointCreated:
			add(e, "turn %d %s %q", p.Turn, p.Tool, p.Reason)
		case *event.TestResult:
			add(e, "%q exit %d passed=%v", p.Command, p.ExitCode, p.Passed)
		case *event.Error:
			add(e, "%s fatal=%v %s", p.Source, p.Fatal, p.Message)
		case *event.RunFinished:
			add(e, "%s turns=%d files=%v", p.Status, p.Turns, p.FilesChanged)
		}
	}
	return out
}

// Compare finds the first step where fresh differs from recorded; nil when
// they agree from start to end.
func Compare(recorded, fresh []Step) *Divergence {
	for i := 0; i < len(recorded) || i < len(fresh); i++ {
		var r, f *Step
		if i < len(recorded) {
			r = &recorded[i]
		}
		if i < len(fresh) {
			f = &fresh[i]
		}
		if r == nil || f == nil || r.Type != f.Type || r.What != f.What {
			return &Divergence{Index: i, Recorded: r, Fresh: f}
		}
	}
	return nil
}

// Replacer rewrites the fresh run's workspace and run id into the
// recording's, so that the two can be compared.
func Replacer(freshWorkspace, recordedWorkspace, freshRun, recordedRun string) func(string) string {
	var pairs []string
	if freshWorkspace != "" && recordedWorkspace != "" {
		pairs = append(pairs, freshWorkspace, recordedWorkspace)
	}
	if freshRun != "" && recordedRun != "" {
		pairs = append(pairs, freshRun, recordedRun)
	}
	return strings.NewReplacer(pairs...).Replace
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// clip cuts s to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
