package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// sse renders events in the API's framing.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
	return b.String()
}

const (
	start = `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":120,"output_tokens":1,"cache_read_input_tokens":100,"cache_creation_input_tokens":20}}}`
	stop  = `{"type":"message_stop"}`
)

type fake struct {
	t        *testing.T
	mu       sync.Mutex
	bodies   []map[string]any
	headers  []http.Header
	replies  []func(w http.ResponseWriter)
	requests int
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	json.Unmarshal(raw, &body)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	reply := f.replies[min(f.requests, len(f.replies)-1)]
	f.requests++
	f.mu.Unlock()
	reply(w)
}

func stream(body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, body)
	}
}

func status(code int, errType, msg string, headers ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, errType, msg)
	}
}

func setup(t *testing.T, replies ...func(w http.ResponseWriter)) (*Anthropic, *fake, *[]time.Duration) {
	t.Helper()
	f := &fake{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	a := New()
	a.getenv = func(string) string { return "" }
	var slept []time.Duration
	a.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	cfg, _ := json.Marshal(map[string]any{"base_url": srv.URL, "api_key": "sk-ant-test", "anthropic_version": "2023-06-01",
		"timeout": "5s", "max_retries": 2, "max_tokens": 1024, "beta": []string{"b1"}})
	if err := a.Configure(context.Background(), plugin.Config{Values: cfg}); err != nil {
		t.Fatal(err)
	}
	return a, f, &slept
}

func chat(a *Anthropic, req provider.Request) ([]provider.Event, error) {
	var got []provider.Event
	err := a.Chat(context.Background(), req, func(e provider.Event) error { got = append(got, e); return nil })
	return got, err
}

var simple = provider.Request{Model: "claude-sonnet-4", Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "hi"}}}}}

func TestStreamsTextThinkingAndTools(t *testing.T) {
	a, f, _ := setup(t, stream(sse(start,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"ping"}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading "}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"two files."}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"list_dir","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\": \"a.go\"}"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":57}}`,
		stop)))
	got, err := chat(a, simple)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Thinking: &provider.Thinking{Text: "Let me see."}},
		{Thinking: &provider.Thinking{Signature: "sig=="}},
		{Text: "Reading "}, {Text: "two files."},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "toolu_1", Name: "read_file"}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `{"pa`}},
		{ToolCall: &provider.ToolCallDelta{Index: 1, ID: "toolu_2", Name: "list_dir"}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `th": "a.go"}`}},
		{Usage: &provider.Usage{InputTokens: 120, OutputTokens: 57, CacheReadTokens: 100, CacheWriteTokens: 20}},
		{Stop: provider.StopToolUse},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	h := f.headers[0]
	if h.Get("x-api-key") != "sk-ant-test" || h.Get("anthropic-version") != "2023-06-01" || h.Get("anthropic-beta") != "b1" {
		t.Errorf("headers %v", h)
	}
}

func TestRequestMapping(t *testing.T) {
	a, f, _ := setup(t, stream(sse(start, stop)))
	temp := 0.5
	_, err := chat(a, provider.Request{Model: "m", System: "be brief", Temperature: &temp, ThinkingBudget: 2048,
		Tools: []provider.ToolSpec{{Name: "read_file", Description: "reads", InputSchemaJSON: `{"type":"object"}`}},
		Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "fix it"}}},
			{Role: provider.RoleAssistant, Parts: []provider.Part{
				{Thinking: &provider.Thinking{Text: "hm", Signature: "sig"}},
				{Text: "reading"},
				{ToolCall: &provider.ToolCall{ID: "t1", Name: "read_file", ArgumentsJSON: `{"path":"a"}`}}}},
			{Role: provider.RoleUser, Parts: []provider.Part{{ToolResult: &provider.ToolResult{CallID: "t1", Content: "data", IsError: true}}}},
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "and?"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(f.bodies[0])
	want := `{"max_tokens":3072,"messages":[{"content":[{"text":"fix it","type":"text"}],"role":"user"},{"content":[{"signature":"sig","thinking":"hm","type":"thinking"},{"text":"reading","type":"text"},{"id":"t1","input":{"path":"a"},"name":"read_file","type":"tool_use"}],"role":"assistant"},{"content":[{"content":"data","is_error":true,"tool_use_id":"t1","type":"tool_result"},{"text":"and?","type":"text"}],"role":"user"}],"model":"m","stream":true,"system":"be brief","temperature":0.5,"thinking":{"budget_tokens":2048,"type":"enabled"},"tools":[{"description":"reads","input_schema":{"type":"object"},"name":"read_file"}]}`
	if string(body) != want {
		t.Errorf("body\n got %s\nwant %s", body, want)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name    string
		replies []func(http.ResponseWriter)
		class   provider.ErrorClass
		tries   int
		events  int
	}{
		{"429 then success", []func(http.ResponseWriter){status(429, "rate_limit_error", "slow down", "retry-after", "3"), stream(sse(start, stop))}, "", 2, 2},
		{"529 overloaded, retries exhausted", []func(http.ResponseWriter){status(529, "overloaded_error", "busy")}, provider.ErrOverloaded, 3, 0},
		{"401 not retried", []func(http.ResponseWriter){status(401, "authentication_error", "invalid x-api-key")}, provider.ErrAuth, 1, 0},
		{"prompt too long", []func(http.ResponseWriter){status(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")}, provider.ErrContextTooLong, 1, 0},
		{"bad request", []func(http.ResponseWriter){status(400, "invalid_request_error", "messages: roles must alternate")}, provider.ErrBadRequest, 1, 0},
		{"500", []func(http.ResponseWriter){status(500, "api_error", "oops")}, provider.ErrServer, 3, 0},
		{"mid-stream error event", []func(http.ResponseWriter){stream(sse(start,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}`,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))}, provider.ErrOverloaded, 1, 1},
		{"cut mid tool_use", []func(http.ResponseWriter){stream(sse(start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"x"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`))}, provider.ErrServer, 1, 2},
		{"malformed data", []func(http.ResponseWriter){stream("event: message_start\ndata: {not json\n\n")}, provider.ErrServer, 3, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, f, slept := setup(t, tc.replies...)
			got, err := chat(a, simple)
			var perr *provider.Error
			switch {
			case tc.class == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.class != "" && (!errors.As(err, &perr) || perr.Class != tc.class):
				t.Fatalf("err = %#v, want class %s", err, tc.class)
			}
			if f.requests != tc.tries || len(got) != tc.events {
				t.Errorf("%d requests, %d events; want %d, %d", f.requests, len(got), tc.tries, tc.events)
			}
			if tc.name == "429 then success" && (len(*slept) != 1 || (*slept)[0] < 3*time.Second) {
				t.Errorf("slept %v, want the retry-after hint of 3s", *slept)
			}
		})
	}
}

func TestCancelIsPrompt(t *testing.T) {
	block := make(chan struct{})
	a, _, _ := setup(t, func(w http.ResponseWriter) {
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, sse(start))
		w.(http.Flusher).Flush()
		<-block
	})
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Chat(ctx, simple, func(provider.Event) error { return nil }) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Chat ignored cancellation")
	}
}

func TestNoKeyIsAuth(t *testing.T) {
	a := New()
	a.getenv = func(string) string { return "" }
	_, err := chat(a, simple)
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrAuth {
		t.Fatalf("err = %v", err)
	}
}
