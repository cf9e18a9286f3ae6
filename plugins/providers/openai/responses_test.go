package openai

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// sseEvents answers with Responses API events framed as OpenAI does:
// `event: TYPE\ndata: {...}\n\n`, the type taken from the JSON.
func sseEvents(events ...string) http.HandlerFunc {
	var b strings.Builder
	for i, e := range events {
		typ := e[strings.Index(e, `"type":"`)+8:]
		typ = typ[:strings.IndexByte(typ, '"')]
		e = strings.Replace(e, `{"type":"`+typ+`"`, fmt.Sprintf(`{"type":"%s","sequence_number":%d`, typ, i), 1)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, e)
	}
	return raw(b.String())
}

const (
	respCreated = `{"type":"response.created","response":{"id":"resp_1","object":"response","created_at":1735689600,` +
		`"status":"in_progress","error":null,"incomplete_details":null,"model":"o4-mini-2025-04-16","output":[],"usage":null}}`
	respCompleted = `{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed",` +
		`"error":null,"incomplete_details":null,"output":[],"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":10},` +
		`"output_tokens":20,"output_tokens_details":{"reasoning_tokens":5},"total_tokens":70}}}`
)

func TestResponsesTextReasoningAndFunctionCall(t *testing.T) {
	f := newFake(t, sseEvents(
		respCreated,
		`{"type":"response.in_progress","response":{"id":"resp_1","status":"in_progress"}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
		`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Need the weather."}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Need the weather."}]}}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`,
		`{"type":"response.content_part.added","item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}`,
		`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Checking"}`,
		`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":" now."}`,
		`{"type":"response.output_text.done","item_id":"msg_1","output_index":1,"content_index":0,"text":"Checking now."}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Checking now.","annotations":[]}]}}`,
		`{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_W","name":"weather"}}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"{\"city\":"}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"\"Paris\"}"}`,
		`{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":2,"arguments":"{\"city\":\"Paris\"}"}`,
		`{"type":"response.output_item.done","output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_W","name":"weather"}}`,
		respCompleted,
	))
	p, _ := testProvider(t, OpenAI, f, map[string]any{"api": "responses"})
	got, err := chat(t, p, provider.Request{Model: "o4-mini", ThinkingBudget: 20000})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Thinking: &provider.Thinking{Text: "Need the weather."}},
		{Text: "Checking"}, {Text: " now."},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "call_W", Name: "weather"}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `{"city":`}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `"Paris"}`}},
		{Usage: &provider.Usage{InputTokens: 40, OutputTokens: 20, CacheReadTokens: 10}},
		{Stop: provider.StopToolUse},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if r := f.requests()[0]; r.Path != "/v1/responses" {
		t.Errorf("path = %s", r.Path)
	}
	if got := f.body(0)["reasoning"]; !cmp.Equal(got, map[string]any{"effort": "high", "summary": "auto"}) {
		t.Errorf("reasoning = %v", got)
	}
}

func TestResponsesRequestBody(t *testing.T) {
	f := newFake(t, sseEvents(respCreated, respCompleted))
	p, _ := testProvider(t, OpenAI, f, map[string]any{"api": "responses"})
	req := provider.Request{
		Model: "gpt-4.1", System: "be brief", MaxOutputTokens: 512,
		Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "weather?"}}},
			{Role: provider.RoleAssistant, Parts: []provider.Part{
				{Thinking: &provider.Thinking{Text: "hm", Signature: "enc"}},
				{Text: "Checking."},
				{ToolCall: &provider.ToolCall{ID: "call_W", Name: "weather", ArgumentsJSON: `{"city":"Paris"}`}},
			}},
			{Role: provider.RoleUser, Parts: []provider.Part{
				{ToolResult: &provider.ToolResult{CallID: "call_W", Content: "sunny"}},
				{Text: "thanks"},
			}},
		},
		Tools: []provider.ToolSpec{{Name: "weather", Description: "forecast", InputSchemaJSON: `{"type":"object"}`}},
	}
	got, err := chat(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if stop := got[len(got)-1].Stop; stop != provider.StopEndTurn {
		t.Errorf("stop = %q", stop)
	}
	var want map[string]any
	mustJSON(t, `{
	  "model": "gpt-4.1", "instructions": "be brief", "stream": true, "store": false, "max_output_tokens": 512,
	  "input": [
	    {"type": "message", "role": "user", "content": "weather?"},
	    {"type": "message", "role": "assistant", "content": "Checking."},
	    {"type": "function_call", "call_id": "call_W", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
	    {"type": "function_call_output", "call_id": "call_W", "output": "sunny"},
	    {"type": "message", "role": "user", "content": "thanks"}
	  ],
	  "tools": [{"type": "function", "name": "weather", "description": "forecast", "parameters": {"type": "object"}, "strict": false}]
	}`, &want)
	if d := cmp.Diff(want, f.body(0)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

func TestResponsesEndings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string
		stop   provider.StopReason
		class  provider.ErrorClass
		msg    string
	}{
		{name: "incomplete", events: []string{respCreated,
			`{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"abc"}`,
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":9}}}`,
		}, stop: provider.StopMaxTokens},
		{name: "refusal", events: []string{
			`{"type":"response.refusal.delta","item_id":"m","output_index":0,"content_index":0,"delta":"I can't."}`, respCompleted,
		}, stop: provider.StopRefusal},
		{name: "failed", events: []string{respCreated,
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed."}}}`,
		}, class: provider.ErrServer, msg: "The model failed."},
		{name: "error event", events: []string{
			`{"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null}`,
		}, class: provider.ErrRateLimited, msg: "Slow down."},
		{name: "cut", events: []string{respCreated,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"c","name":"n"}}`,
		}, class: provider.ErrServer, msg: "stream ended early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, sseEvents(tc.events...))
			p, _ := testProvider(t, OpenAI, f, map[string]any{"api": "responses", "max_retries": 0})
			got, err := chat(t, p, provider.Request{})
			if tc.class != "" {
				if perr := asError(t, err); perr.Class != tc.class || !strings.Contains(perr.Message, tc.msg) {
					t.Errorf("error = %v, want %s containing %q", perr, tc.class, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stop := got[len(got)-1].Stop; stop != tc.stop {
				t.Errorf("stop = %q, want %q", stop, tc.stop)
			}
		})
	}
}

func TestResponsesOnlyForOpenAI(t *testing.T) {
	p, _ := New(Groq)
	err := p.Configure(t.Context(), configValues(t, map[string]any{"api": "responses"}))
	if err == nil || !strings.Contains(err.Error(), "only available on the openai component") {
		t.Errorf("err = %v", err)
	}
}
