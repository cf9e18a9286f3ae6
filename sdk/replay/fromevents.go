package replay

import (
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// FromEvents rebuilds the model's side of a recorded run: one turn per
// model answer, with its thinking, final text, tool calls (ids kept, so
// recorded approvals still match) and usage. A provider failure that
// ended the run becomes an error turn. Fallbacks between models are not
// replayed: the answer that was used is.
func FromEvents(model string, events []event.Event) *Conversation {
	conv := &Conversation{Model: model}
	var cur *Turn
	answered := false // cur got its usage: only tool calls may follow
	flush := func() {
		if cur == nil {
			return
		}
		stop := "end_turn"
		for _, e := range cur.Events {
			if e.ToolCall != nil {
				stop = "tool_use"
			}
		}
		cur.Events = append(cur.Events, TurnEvent{Stop: stop})
		conv.Turns = append(conv.Turns, *cur)
		cur, answered = nil, false
	}
	open := func() *Turn {
		if cur == nil || answered {
			flush()
			cur = &Turn{}
		}
		return cur
	}
	for _, e := range events {
		switch p := e.Payload.(type) {
		case *event.ThinkingDelta:
			t := open()
			if n := len(t.Events); n > 0 && t.Events[n-1].Thinking != "" {
				t.Events[n-1].Thinking += p.Text
			} else {
				t.Events = append(t.Events, TurnEvent{Thinking: p.Text})
			}
		case *event.Message:
			if p.Role == "assistant" && !p.Delta && p.Text != "" {
				open().Events = append(open().Events, TurnEvent{Text: p.Text})
			}
		case *event.TokenUsage:
			t := open()
			t.Events = append(t.Events, TurnEvent{Usage: &RecordedUsage{Input: p.Input, Output: p.Output}})
			answered = true
		case *event.ToolUseProposed:
			if cur == nil {
				cur = &Turn{}
			}
			args := p.Arguments
			if len(args) == 0 {
				args = []byte("{}")
			}
			cur.Events = append(cur.Events, TurnEvent{ToolCall: &RecordedCall{ID: p.CallID, Name: p.Tool, Arguments: args}})
		case *event.Error:
			if p.Source == "provider" && p.Fatal {
				flush()
				conv.Turns = append(conv.Turns, Turn{Error: &TurnError{Class: p.Class, Message: p.Message}})
			}
		}
	}
	flush()
	return conv
}
