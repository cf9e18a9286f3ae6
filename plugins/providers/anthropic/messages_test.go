package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// conversation is a tool-using exchange with signed thinking, as the
// kernel sends it back on the next turn.
func conversation() provider.Request {
	temp := 0.2
	return provider.Request{
		Model: "claude-sonnet-4", System: "You are Sparrow.", Temperature: &temp, MaxOutputTokens: 4096,
		Tools: []provider.ToolSpec{
			{Name: "read_file", Description: "Reads a file.", InputSchemaJSON: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`},
			{Name: "git_status", Description: "Shows status."},
		},
		Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "Fix the test."}}},
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "It is in a_test.go <b>."}}},
			{Role: provider.RoleAssistant, Parts: []provider.Part{
				{Thinking: &provider.Thinking{Text: "Read it first.", Signature: "sig-1=="}},
				{Thinking: &provider.Thinking{Text: "another vendor's reasoning"}},
				{Text: "Reading."},
				{ToolCall: &provider.ToolCall{ID: "toolu_1", Name: "read_file", ArgumentsJSON: `{"path":"a_test.go"}`}},
				{ToolCall: &provider.ToolCall{ID: "toolu_2", Name: "git_status"}},
			}},
			{Role: provider.RoleUser, Parts: []provider.Part{
				{ToolResult: &provider.ToolResult{CallID: "toolu_1", Content: "package a"}},
			}},
			{Role: provider.RoleUser, Parts: []provider.Part{
				{ToolResult: &provider.ToolResult{CallID: "toolu_2", Content: "fatal: not a git repository", IsError: true}},
				{Text: ""},
			}},
		},
	}
}

// compact re-encodes JSON without insignificant space, keys sorted.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func TestRequestBody(t *testing.T) {
	h := newHarness(t, map[string]any{"beta": []string{"interleaved-thinking-2025-05-14", "context-1m-2025-08-07"}},
		events(evStart, evEndTurn, evStop))
	if _, err := h.chat(conversation()); err != nil {
		t.Fatal(err)
	}
	r := h.fake.requests()[0]
	if r.Method != "POST" || r.Path != "/v1/messages" {
		t.Errorf("%s %s", r.Method, r.Path)
	}
	wantHeaders := map[string]string{
		"X-Api-Key": "sk-ant-test", "Anthropic-Version": "2023-06-01", "Content-Type": "application/json",
		"Anthropic-Beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07", "Accept": "text/event-stream",
	}
	for k, v := range wantHeaders {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	want := `{"max_tokens":4096,"messages":[` +
		`{"content":[{"text":"Fix the test.","type":"text"},{"text":"It is in a_test.go <b>.","type":"text"}],"role":"user"},` +
		`{"content":[{"signature":"sig-1==","thinking":"Read it first.","type":"thinking"},{"text":"Reading.","type":"text"},` +
		`{"id":"toolu_1","input":{"path":"a_test.go"},"name":"read_file","type":"tool_use"},` +
		`{"id":"toolu_2","input":{},"name":"git_status","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"package a","tool_use_id":"toolu_1","type":"tool_result"},` +
		`{"content":"fatal: not a git repository","is_error":true,"tool_use_id":"toolu_2","type":"tool_result"}],"role":"user"}],` +
		`"model":"claude-sonnet-4-20250514","stream":true,"system":"You are Sparrow.","temperature":0.2,` +
		`"tools":[{"description":"Reads a file.","input_schema":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"},"name":"read_file"},` +
		`{"description":"Shows status.","input_schema":{"type":"object"},"name":"git_status"}]}`
	if d := cmp.Diff(want, compact(t, r.Body)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

func TestRequestCacheBreakpoints(t *testing.T) {
	req := conversation()
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{{Text: "Fixed."}}},
		provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Text: "Thanks, now run it."}}})
	raw, err := buildRequest(req, requestOptions{defaultMaxTokens: 100, caching: true})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, s := range body.System {
		if s["cache_control"] != nil {
			marked = append(marked, "system:"+s["text"].(string))
		}
	}
	for _, tl := range body.Tools {
		if tl["cache_control"] != nil {
			marked = append(marked, "tool:"+tl["name"].(string))
		}
	}
	for i, m := range body.Messages {
		for _, b := range m.Content {
			if cc, ok := b["cache_control"].(map[string]any); ok && cc["type"] == "ephemeral" {
				marked = append(marked, strings.Repeat("m", i+1)+":"+b["type"].(string))
			}
		}
	}
	want := []string{"system:You are Sparrow.", "mmm:tool_result", "mmmmm:text"}
	if d := cmp.Diff(want, marked); d != "" {
		t.Errorf("breakpoints (-want +got):\n%s", d)
	}
}

func TestRequestCacheBreakpointOnToolsWithoutSystem(t *testing.T) {
	req := conversation()
	req.System = ""
	raw, err := buildRequest(req, requestOptions{defaultMaxTokens: 100, caching: true})
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	if strings.Contains(s, `"system"`) || !strings.Contains(s, `"description":"Shows status.","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]`) {
		t.Errorf("body %s", s)
	}
}

func TestRequestThinking(t *testing.T) {
	cases := []struct {
		name          string
		budget, max   int64
		wantMax       int64
		wantBudget    int64
		wantNoThought bool
	}{
		{name: "budget fits", budget: 4000, max: 16000, wantMax: 16000, wantBudget: 4000},
		{name: "max_tokens raised above budget", budget: 10000, max: 0, wantMax: 11024, wantBudget: 10000},
		{name: "budget raised to the API minimum", budget: 100, max: 8000, wantMax: 8000, wantBudget: 1024},
		{name: "no budget", budget: 0, max: 0, wantMax: 8192, wantNoThought: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			temp := 0.7
			req := provider.Request{Model: "claude-opus-4-1", ThinkingBudget: tc.budget, MaxOutputTokens: tc.max, Temperature: &temp,
				Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "think"}}}}}
			raw, err := buildRequest(req, requestOptions{defaultMaxTokens: 8192})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				MaxTokens   int64           `json:"max_tokens"`
				Temperature *float64        `json:"temperature"`
				Thinking    *thinkingConfig `json:"thinking"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if got.MaxTokens != tc.wantMax {
				t.Errorf("max_tokens = %d, want %d", got.MaxTokens, tc.wantMax)
			}
			if tc.wantNoThought {
				if got.Thinking != nil || got.Temperature == nil {
					t.Errorf("body %s", raw)
				}
				return
			}
			if got.Thinking == nil || got.Thinking.Type != "enabled" || got.Thinking.BudgetTokens != tc.wantBudget {
				t.Errorf("thinking = %+v", got.Thinking)
			}
			if got.Temperature != nil {
				t.Errorf("temperature sent with thinking: %s", raw)
			}
		})
	}
}

// TestThinkingOnlyWhenTheToolTurnCanCarryIt: a continued tool-use turn
// whose assistant message lacks a signed thinking block is sent without
// thinking, which the API would otherwise refuse.
func TestThinkingOnlyWhenTheToolTurnCanCarryIt(t *testing.T) {
	turn := func(parts ...provider.Part) provider.Request {
		return provider.Request{Model: "m", ThinkingBudget: 2048, Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "go"}}},
			{Role: provider.RoleAssistant, Parts: parts},
			{Role: provider.RoleUser, Parts: []provider.Part{{ToolResult: &provider.ToolResult{CallID: "t", Content: "ok"}}}},
		}}
	}
	call := provider.Part{ToolCall: &provider.ToolCall{ID: "t", Name: "x", ArgumentsJSON: "{}"}}
	cases := []struct {
		name string
		req  provider.Request
		want bool
	}{
		{"signed thinking first", turn(provider.Part{Thinking: &provider.Thinking{Text: "a", Signature: "s"}}, call), true},
		{"no thinking", turn(provider.Part{Text: "calling"}, call), false},
		{"unsigned thinking only", turn(provider.Part{Thinking: &provider.Thinking{Text: "a"}}, call), false},
		{"new user turn", provider.Request{Model: "m", ThinkingBudget: 2048,
			Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "go"}}}}}, true},
	}
	for _, tc := range cases {
		raw, err := buildRequest(tc.req, requestOptions{defaultMaxTokens: 8192})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(raw), `"thinking":{"type":"enabled"`); got != tc.want {
			t.Errorf("%s: thinking enabled = %v, want %v: %s", tc.name, got, tc.want, raw)
		}
	}
}

func TestRequestRejects(t *testing.T) {
	cases := []struct {
		name string
		req  provider.Request
		want string
	}{
		{"no model", provider.Request{}, "no model"},
		{"bad schema", provider.Request{Model: "m", Tools: []provider.ToolSpec{{Name: "x", InputSchemaJSON: `["not","object"]`}}}, `tool "x"`},
		{"bad role", provider.Request{Model: "m", Messages: []provider.Message{{Role: "system", Parts: []provider.Part{{Text: "x"}}}}}, `unknown role "system"`},
	}
	for _, tc := range cases {
		_, err := buildRequest(tc.req, requestOptions{defaultMaxTokens: 1})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestTruncatedToolArgumentsSentAsEmptyObject: arguments cut short by
// max_tokens must not make the whole conversation unsendable.
func TestTruncatedToolArgumentsSentAsEmptyObject(t *testing.T) {
	raw, err := buildRequest(provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleAssistant,
		Parts: []provider.Part{{ToolCall: &provider.ToolCall{ID: "t", Name: "write_file", ArgumentsJSON: `{"path":"a.go","cont`}}}}}},
		requestOptions{defaultMaxTokens: 1})
	if err != nil || !strings.Contains(string(raw), `"input":{}`) {
		t.Fatalf("err %v, body %s", err, raw)
	}
}
