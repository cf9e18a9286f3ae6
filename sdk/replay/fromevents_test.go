package replay

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

func TestFromEventsRebuildsTheModelsTurns(t *testing.T) {
	events := []event.Event{
		{Payload: &event.RunStarted{Task: "fix it"}},
		{Payload: &event.ThinkingDelta{Text: "let me "}},
		{Payload: &event.ThinkingDelta{Text: "look"}},
		{Payload: &event.Message{Role: "assistant", Text: "Looking", Delta: true}},
		{Payload: &event.Message{Role: "assistant", Text: "Looking."}},
		{Payload: &event.TokenUsage{Input: 10, Output: 3}},
		{Payload: &event.CostUpdate{}},
		{Payload: &event.ToolUseProposed{CallID: "c1", Tool: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}},
		{Payload: &event.ToolUseStarted{CallID: "c1"}},
		{Payload: &event.ToolOutput{CallID: "c1", Text: "x", Final: true}},
		{Payload: &event.ToolUseProposed{CallID: "c2", Tool: "write_file", Arguments: json.RawMessage(`{"path":"b"}`)}},
		// A turn of tool calls only.
		{Payload: &event.ModelSwitched{From: "a", To: "b"}},
		{Payload: &event.TokenUsage{Input: 20, Output: 4}},
		{Payload: &event.ToolUseProposed{CallID: "c3", Tool: "shell"}},
		{Payload: &event.Message{Role: "assistant", Text: "Done."}},
		{Payload: &event.TokenUsage{Input: 30, Output: 5}},
		{Payload: &event.Error{Source: "provider", Class: "rate_limited", Message: "429", Fatal: true}},
		{Payload: &event.RunFinished{Status: "failed"}},
	}
	got := FromEvents("m", events)
	want := &Conversation{Model: "m", Turns: []Turn{
		{Events: []TurnEvent{{Thinking: "let me look"}, {Text: "Looking."}, {Usage: &RecordedUsage{10, 3}},
			{ToolCall: &RecordedCall{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}},
			{ToolCall: &RecordedCall{ID: "c2", Name: "write_file", Arguments: json.RawMessage(`{"path":"b"}`)}},
			{Stop: "tool_use"}}},
		{Events: []TurnEvent{{Usage: &RecordedUsage{20, 4}},
			{ToolCall: &RecordedCall{ID: "c3", Name: "shell", Arguments: json.RawMessage(`{}`)}}, {Stop: "tool_use"}}},
		{Events: []TurnEvent{{Text: "Done."}, {Usage: &RecordedUsage{30, 5}}, {Stop: "end_turn"}}},
		{Error: &TurnError{Class: "rate_limited", Message: "429"}},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("conversation (-want +got):\n%s", d)
	}
}
