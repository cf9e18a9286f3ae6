package provider

import (
	"fmt"
	"time"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

func modelToProto(m Model) *pb.Model {
	return &pb.Model{
		Id: m.ID, DisplayName: m.DisplayName, ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens,
		InputPricePerMtok: m.InputPricePerMTok, OutputPricePerMtok: m.OutputPricePerMTok,
		CacheReadPricePerMtok: m.CacheReadPerMTok, CacheWritePricePerMtok: m.CacheWritePerMTok,
		SupportsTools: m.SupportsTools, SupportsThinking: m.SupportsThinking,
	}
}

func modelFromProto(m *pb.Model) Model {
	return Model{
		ID: m.GetId(), DisplayName: m.GetDisplayName(), ContextWindow: m.GetContextWindow(), MaxOutputTokens: m.GetMaxOutputTokens(),
		InputPricePerMTok: m.GetInputPricePerMtok(), OutputPricePerMTok: m.GetOutputPricePerMtok(),
		CacheReadPerMTok: m.GetCacheReadPricePerMtok(), CacheWritePerMTok: m.GetCacheWritePricePerMtok(),
		SupportsTools: m.GetSupportsTools(), SupportsThinking: m.GetSupportsThinking(),
	}
}

var roleToProto = map[Role]pb.Role{RoleUser: pb.Role_ROLE_USER, RoleAssistant: pb.Role_ROLE_ASSISTANT}

func requestToProto(component string, r Request) *pb.ChatRequest {
	out := &pb.ChatRequest{
		Component: component, Model: r.Model, System: r.System,
		MaxOutputTokens: r.MaxOutputTokens, Temperature: r.Temperature, ThinkingBudget: r.ThinkingBudget, Seed: r.Seed,
	}
	for _, m := range r.Messages {
		pm := &pb.ChatMessage{Role: roleToProto[m.Role]}
		for _, p := range m.Parts {
			pm.Parts = append(pm.Parts, partToProto(p))
		}
		out.Messages = append(out.Messages, pm)
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, &pb.ToolSpec{Name: t.Name, Description: t.Description, InputSchemaJson: t.InputSchemaJSON})
	}
	return out
}

func partToProto(p Part) *pb.ContentPart {
	switch {
	case p.ToolCall != nil:
		return &pb.ContentPart{Part: &pb.ContentPart_ToolCall{ToolCall: &pb.ToolCall{
			Id: p.ToolCall.ID, Name: p.ToolCall.Name, ArgumentsJson: p.ToolCall.ArgumentsJSON}}}
	case p.ToolResult != nil:
		return &pb.ContentPart{Part: &pb.ContentPart_ToolResult{ToolResult: &pb.ToolResult{
			CallId: p.ToolResult.CallID, Content: p.ToolResult.Content, IsError: p.ToolResult.IsError}}}
	case p.Thinking != nil:
		return &pb.ContentPart{Part: &pb.ContentPart_Thinking{Thinking: &pb.Thinking{
			Text: p.Thinking.Text, Signature: p.Thinking.Signature}}}
	default:
		return &pb.ContentPart{Part: &pb.ContentPart_Text{Text: p.Text}}
	}
}

func requestFromProto(r *pb.ChatRequest) (Request, error) {
	out := Request{
		Model: r.GetModel(), System: r.GetSystem(), MaxOutputTokens: r.GetMaxOutputTokens(),
		Temperature: r.Temperature, ThinkingBudget: r.GetThinkingBudget(), Seed: r.Seed,
	}
	for i, m := range r.GetMessages() {
		msg := Message{}
		for k, v := range roleToProto {
			if v == m.GetRole() {
				msg.Role = k
			}
		}
		if msg.Role == "" {
			return Request{}, fmt.Errorf("messages[%d]: unknown role %v", i, m.GetRole())
		}
		for _, p := range m.GetParts() {
			switch v := p.GetPart().(type) {
			case *pb.ContentPart_Text:
				msg.Parts = append(msg.Parts, Part{Text: v.Text})
			case *pb.ContentPart_Thinking:
				msg.Parts = append(msg.Parts, Part{Thinking: &Thinking{Text: v.Thinking.GetText(), Signature: v.Thinking.GetSignature()}})
			case *pb.ContentPart_ToolCall:
				msg.Parts = append(msg.Parts, Part{ToolCall: &ToolCall{ID: v.ToolCall.GetId(), Name: v.ToolCall.GetName(), ArgumentsJSON: v.ToolCall.GetArgumentsJson()}})
			case *pb.ContentPart_ToolResult:
				msg.Parts = append(msg.Parts, Part{ToolResult: &ToolResult{CallID: v.ToolResult.GetCallId(), Content: v.ToolResult.GetContent(), IsError: v.ToolResult.GetIsError()}})
			default:
				return Request{}, fmt.Errorf("messages[%d]: empty content part", i)
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, t := range r.GetTools() {
		out.Tools = append(out.Tools, ToolSpec{Name: t.GetName(), Description: t.GetDescription(), InputSchemaJSON: t.GetInputSchemaJson()})
	}
	return out, nil
}

var stopToProto = map[StopReason]pb.StopReason{
	StopEndTurn: pb.StopReason_STOP_REASON_END_TURN, StopToolUse: pb.StopReason_STOP_REASON_TOOL_USE,
	StopMaxTokens: pb.StopReason_STOP_REASON_MAX_TOKENS, StopRefusal: pb.StopReason_STOP_REASON_REFUSAL,
}

var classToProto = map[ErrorClass]pb.ErrorClass{
	ErrRateLimited: pb.ErrorClass_ERROR_CLASS_RATE_LIMITED, ErrOverloaded: pb.ErrorClass_ERROR_CLASS_OVERLOADED,
	ErrServer: pb.ErrorClass_ERROR_CLASS_SERVER, ErrTimeout: pb.ErrorClass_ERROR_CLASS_TIMEOUT,
	ErrAuth: pb.ErrorClass_ERROR_CLASS_AUTH, ErrBadRequest: pb.ErrorClass_ERROR_CLASS_BAD_REQUEST,
	ErrContextTooLong: pb.ErrorClass_ERROR_CLASS_CONTEXT_TOO_LONG, ErrRefusal: pb.ErrorClass_ERROR_CLASS_REFUSAL,
}

func eventToProto(e Event) (*pb.ChatEvent, error) {
	switch {
	case e.ToolCall != nil:
		return &pb.ChatEvent{Event: &pb.ChatEvent_ToolCallDelta{ToolCallDelta: &pb.ToolCallDelta{
			Index: int32(e.ToolCall.Index), Id: e.ToolCall.ID, Name: e.ToolCall.Name, ArgumentsDelta: e.ToolCall.ArgumentsDelta}}}, nil
	case e.Thinking != nil:
		return &pb.ChatEvent{Event: &pb.ChatEvent_ThinkingDelta{ThinkingDelta: &pb.ThinkingDelta{
			Text: e.Thinking.Text, Signature: e.Thinking.Signature}}}, nil
	case e.Usage != nil:
		u := e.Usage
		return &pb.ChatEvent{Event: &pb.ChatEvent_Usage{Usage: &pb.Usage{
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}}}, nil
	case e.Stop != "":
		r, ok := stopToProto[e.Stop]
		if !ok {
			return nil, fmt.Errorf("unknown stop reason %q", e.Stop)
		}
		return &pb.ChatEvent{Event: &pb.ChatEvent_Stop{Stop: &pb.Stop{Reason: r}}}, nil
	default:
		return &pb.ChatEvent{Event: &pb.ChatEvent_TextDelta{TextDelta: e.Text}}, nil
	}
}

// eventFromProto converts one streamed message; a ProviderError becomes a
// non-nil *Error.
func eventFromProto(ev *pb.ChatEvent) (Event, *Error, error) {
	switch v := ev.GetEvent().(type) {
	case *pb.ChatEvent_TextDelta:
		return Event{Text: v.TextDelta}, nil, nil
	case *pb.ChatEvent_ThinkingDelta:
		return Event{Thinking: &Thinking{Text: v.ThinkingDelta.GetText(), Signature: v.ThinkingDelta.GetSignature()}}, nil, nil
	case *pb.ChatEvent_ToolCallDelta:
		d := v.ToolCallDelta
		if d.GetIndex() < 0 {
			return Event{}, nil, fmt.Errorf("tool call delta with negative index %d", d.GetIndex())
		}
		return Event{ToolCall: &ToolCallDelta{Index: int(d.GetIndex()), ID: d.GetId(), Name: d.GetName(), ArgumentsDelta: d.GetArgumentsDelta()}}, nil, nil
	case *pb.ChatEvent_Usage:
		u := v.Usage
		return Event{Usage: &Usage{InputTokens: u.GetInputTokens(), OutputTokens: u.GetOutputTokens(), CacheReadTokens: u.GetCacheReadTokens(), CacheWriteTokens: u.GetCacheWriteTokens()}}, nil, nil
	case *pb.ChatEvent_Stop:
		for k, r := range stopToProto {
			if r == v.Stop.GetReason() {
				return Event{Stop: k}, nil, nil
			}
		}
		return Event{}, nil, fmt.Errorf("unknown stop reason %v", v.Stop.GetReason())
	case *pb.ChatEvent_Error:
		e := v.Error
		class := ErrServer
		for k, c := range classToProto {
			if c == e.GetClass() {
				class = k
			}
		}
		return Event{}, &Error{Class: class, Message: e.GetMessage(), RetryAfter: time.Duration(e.GetRetryAfterMs()) * time.Millisecond, HTTPStatus: int(e.GetHttpStatus())}, nil
	default:
		return Event{}, nil, fmt.Errorf("empty chat event")
	}
}

func errorToProto(e *Error) *pb.ChatEvent {
	return &pb.ChatEvent{Event: &pb.ChatEvent_Error{Error: &pb.ProviderError{
		Class: classToProto[e.Class], Message: e.Message, RetryAfterMs: e.RetryAfter.Milliseconds(), HttpStatus: int32(e.HTTPStatus),
	}}}
}
