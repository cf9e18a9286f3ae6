package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// chunk builds a Chat Completions chunk as OpenAI streams it.
func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735689600,"model":"gpt-4.1-2025-04-14",`+
		`"system_fingerprint":"fp_1","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`, delta, f)
}

const usageChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735689600,"model":"gpt-4.1-2025-04-14",` +
	`"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":17,"total_tokens":137,` +
	`"prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`

func TestChatStreamsText(t *testing.T) {
	f := newFake(t, sseChunks(
		chunk(`{"role":"assistant","content":"","refusal":null}`, ""),
		chunk(`{"content":"Hel"}`, ""),
		chunk(`{"content":"lo."}`, ""),
		chunk(`{}`, "stop"),
		usageChunk,
	))
	p, _ := testProvider(t, OpenAI, f, nil)
	got, err := chat(t, p, provider.Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Text: "Hel"}, {Text: "lo."},
		{Usage: &provider.Usage{InputTokens: 20, OutputTokens: 17, CacheReadTokens: 100}},
		{Stop: provider.StopEndTurn},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestChatSSEFramingAcrossWrites(t *testing.T) {
	// One event split over several TCP writes, CRLF line ends, a comment
	// and a data field spread over two lines.
	f := newFake(t, raw(
		": OPENROUTER PROCESSING\r\n\r\n",
		`data: {"choices":[{"index":0,"delta":{"con`,
		`tent":"a"}}]}`+"\r\n\r\n",
		`data: {"choices":[{"index":0,`+"\n"+`data: "delta":{"content":"b"},"finish_reason":"stop"}]}`+"\n\n",
		"data: [DONE]",
	))
	p, _ := testProvider(t, OpenRouter, f, nil)
	got, err := chat(t, p, provider.Request{Model: "openai/gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{{Text: "a"}, {Text: "b"}, {Usage: &provider.Usage{}}, {Stop: provider.StopEndTurn}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	call := func(i int, id, name, args string) string {
		fn := fmt.Sprintf(`{"arguments":%q}`, args)
		if name != "" {
			fn = fmt.Sprintf(`{"name":%q,"arguments":%q}`, name, args)
		}
		idPart := ""
		if id != "" {
			idPart = fmt.Sprintf(`"id":%q,"type":"function",`, id)
		}
		return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,%s"function":%s}]}`, i, idPart, fn), "")
	}
	f := newFake(t, sseChunks(
		chunk(`{"role":"assistant","content":null}`, ""),
		call(0, "call_A", "read_file", ""),
		call(0, "", "", `{"pa`),
		call(0, "", "", `th":"a.go"}`),
		call(1, "call_B", "grep", `{"pat`),
		call(1, "", "", `tern":"TODO"}`),
		chunk(`{}`, "tool_calls"),
		usageChunk,
	))
	p, _ := testProvider(t, OpenAI, f, nil)
	got, err := chat(t, p, provider.Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "call_A", Name: "read_file"}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `{"pa`}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `th":"a.go"}`}},
		{ToolCall: &provider.ToolCallDelta{Index: 1, ID: "call_B", Name: "grep", ArgumentsDelta: `{"pat`}},
		{ToolCall: &provider.ToolCallDelta{Index: 1, ArgumentsDelta: `tern":"TODO"}`}},
		{Usage: &provider.Usage{InputTokens: 20, OutputTokens: 17, CacheReadTokens: 100}},
		{Stop: provider.StopToolUse},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestChatToolCallsWithoutDistinctIndexes(t *testing.T) {
	// Some servers send each call whole, all at index 0 (or with no index),
	// and finish with "stop".
	f := newFake(t, sseChunks(
		chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}]}`, ""),
		chunk(`{"tool_calls":[{"id":"c3","type":"function","function":{"name":"c","arguments":"{"}}]}`, ""),
		chunk(`{"tool_calls":[{"function":{"arguments":"}"}}]}`, "stop"),
	))
	p, _ := testProvider(t, Ollama, f, nil)
	got, err := chat(t, p, provider.Request{Model: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "c1", Name: "a", ArgumentsDelta: "{}"}},
		{ToolCall: &provider.ToolCallDelta{Index: 1, ID: "c2", Name: "b", ArgumentsDelta: "{}"}},
		{ToolCall: &provider.ToolCallDelta{Index: 2, ID: "c3", Name: "c", ArgumentsDelta: "{"}},
		{ToolCall: &provider.ToolCallDelta{Index: 2, ArgumentsDelta: "}"}},
		{Usage: &provider.Usage{}},
		{Stop: provider.StopToolUse},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestChatReasoningDeltas(t *testing.T) {
	f := newFake(t, sseChunks(
		chunk(`{"role":"assistant","content":null,"reasoning_content":"Let me"}`, ""), // DeepSeek, vLLM
		chunk(`{"content":null,"reasoning":" think."}`, ""),                           // OpenRouter
		chunk(`{"content":"42"}`, ""),
		chunk(`{}`, "length"),
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":30,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":6}}`,
	))
	p, _ := testProvider(t, DeepSeek, f, nil)
	got, err := chat(t, p, provider.Request{Model: "deepseek-reasoner"})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Thinking: &provider.Thinking{Text: "Let me"}},
		{Thinking: &provider.Thinking{Text: " think."}},
		{Text: "42"},
		{Usage: &provider.Usage{InputTokens: 6, OutputTokens: 30, CacheReadTokens: 4}},
		{Stop: provider.StopMaxTokens},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestChatRefusal(t *testing.T) {
	f := newFake(t, sseChunks(
		chunk(`{"role":"assistant","content":null,"refusal":"I can't help"}`, ""),
		chunk(`{"refusal":" with that."}`, ""),
		chunk(`{}`, "stop"),
	), sseChunks(chunk(`{"content":"x"}`, "content_filter")))
	p, _ := testProvider(t, OpenAI, f, nil)
	for i := range 2 {
		got, err := chat(t, p, provider.Request{})
		if err != nil {
			t.Fatal(err)
		}
		if stop := got[len(got)-1].Stop; stop != provider.StopRefusal {
			t.Errorf("request %d: stop = %q, want refusal", i, stop)
		}
	}
}

func TestChatRequestBody(t *testing.T) {
	f := newFake(t, sseChunks(chunk(`{"content":"ok"}`, "stop")))
	p, _ := testProvider(t, OpenAI, f, map[string]any{
		"organization": "org-1", "headers": map[string]string{"X-Custom": "yes"},
	})
	temp, seed := 0.3, int64(7)
	req := provider.Request{
		Model: "gpt-4.1", System: "be brief", MaxOutputTokens: 2048, Temperature: &temp, Seed: &seed,
		Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "list files"}}},
			{Role: provider.RoleAssistant, Parts: []provider.Part{
				{Thinking: &provider.Thinking{Text: "use ls", Signature: "sig"}},
				{Text: "Looking."},
				{ToolCall: &provider.ToolCall{ID: "call_1", Name: "shell", ArgumentsJSON: `{"argv":["ls"]}`}},
				{ToolCall: &provider.ToolCall{ID: "call_2", Name: "pwd"}},
			}},
			{Role: provider.RoleUser, Parts: []provider.Part{
				{ToolResult: &provider.ToolResult{CallID: "call_1", Content: "a.go"}},
				{ToolResult: &provider.ToolResult{CallID: "call_2", Content: "denied", IsError: true}},
				{Text: "and now?"},
			}},
		},
		Tools: []provider.ToolSpec{
			{Name: "shell", Description: "runs a command", InputSchemaJSON: `{"type":"object","properties":{"argv":{"type":"array"}}}`},
			{Name: "pwd"},
		},
	}
	if _, err := chat(t, p, req); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	for k, v := range map[string]string{"Authorization": "Bearer sk-test", "X-Custom": "yes",
		"Openai-Organization": "org-1", "Content-Type": "application/json", "Accept": "text/event-stream"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	var want map[string]any
	mustJSON(t, `{
	  "model": "gpt-4.1", "stream": true, "stream_options": {"include_usage": true},
	  "max_completion_tokens": 2048, "temperature": 0.3, "seed": 7,
	  "messages": [
	    {"role": "system", "content": "be brief"},
	    {"role": "user", "content": "list files"},
	    {"role": "assistant", "content": "Looking.", "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"argv\":[\"ls\"]}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "a.go"},
	    {"role": "tool", "tool_call_id": "call_2", "content": "Error: denied"},
	    {"role": "user", "content": "and now?"}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "shell", "description": "runs a command",
	      "parameters": {"type": "object", "properties": {"argv": {"type": "array"}}}}},
	    {"type": "function", "function": {"name": "pwd", "parameters": {"type": "object", "properties": {}}}}
	  ]
	}`, &want)
	if d := cmp.Diff(want, f.body(0)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

func TestChatMaxTokensSpelling(t *testing.T) {
	f := newFake(t, sseChunks(chunk(`{"content":"ok"}`, "stop")))
	p, _ := testProvider(t, Groq, f, nil)
	if _, err := chat(t, p, provider.Request{Model: "llama-3.3-70b-versatile", MaxOutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	b := f.body(0)
	if b["max_tokens"] != 100.0 || b["max_completion_tokens"] != nil {
		t.Errorf("groq body: max_tokens=%v max_completion_tokens=%v", b["max_tokens"], b["max_completion_tokens"])
	}
	if got := f.requests()[0].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestChatReasoningEffort(t *testing.T) {
	f := newFake(t, sseChunks(chunk(`{"content":"ok"}`, "stop")))
	p, _ := testProvider(t, OpenAI, f, nil)
	for _, tc := range []struct {
		model  string
		budget int64
		want   any
	}{{"o4-mini", 2000, "low"}, {"gpt-5", 10000, "medium"}, {"gpt-4.1", 10000, nil}} {
		n := len(f.requests())
		if _, err := chat(t, p, provider.Request{Model: tc.model, ThinkingBudget: tc.budget}); err != nil {
			t.Fatal(err)
		}
		if got := f.body(n)["reasoning_effort"]; got != tc.want {
			t.Errorf("%s: reasoning_effort = %v, want %v", tc.model, got, tc.want)
		}
	}
}

func TestChatMalformedLine(t *testing.T) {
	f := newFake(t, raw(
		"data: "+chunk(`{"content":"ok"}`, "")+"\n\n",
		"data: {\"choices\": [oops\n\n",
		"data: [DONE]\n\n",
	))
	p, sl := testProvider(t, OpenAI, f, nil)
	got, err := chat(t, p, provider.Request{})
	perr := asError(t, err)
	if perr.Class != provider.ErrServer || !strings.Contains(perr.Message, "line 3") || !strings.Contains(perr.Message, "oops") {
		t.Errorf("error = %v, want server error naming line 3 and its data", perr)
	}
	if len(got) != 1 || len(f.requests()) != 1 || len(sl.got()) != 0 {
		t.Errorf("got %d events, %d requests, %d sleeps; want 1, 1 (no retry after output), 0", len(got), len(f.requests()), len(sl.got()))
	}
}

func TestChatStreamCutMidToolCall(t *testing.T) {
	f := newFake(t, raw(
		"data: "+chunk(`{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"write","arguments":""}}]}`, "")+"\n\n",
		"data: "+chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, "")+"\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_c`,
	))
	p, sl := testProvider(t, OpenAI, f, nil)
	got, err := chat(t, p, provider.Request{})
	perr := asError(t, err)
	if perr.Class != provider.ErrServer || !strings.Contains(perr.Message, "stream ended early") {
		t.Errorf("error = %v, want server: stream ended early", perr)
	}
	if len(got) != 2 || len(f.requests()) != 1 || len(sl.got()) != 0 {
		t.Errorf("got %d events, %d requests, %d sleeps; want 2, 1, 0", len(got), len(f.requests()), len(sl.got()))
	}
}

func TestChatInStreamError(t *testing.T) {
	// OpenRouter reports upstream failures as a chunk with an error object.
	f := newFake(t, sseChunks(
		chunk(`{"content":"par"}`, ""),
		`{"error":{"message":"Upstream overloaded","code":503}}`,
	))
	p, _ := testProvider(t, OpenRouter, f, nil)
	_, err := chat(t, p, provider.Request{Model: "x/y"})
	if perr := asError(t, err); perr.Class != provider.ErrOverloaded || !strings.Contains(perr.Message, "Upstream overloaded") {
		t.Errorf("error = %v", perr)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1: output was already streamed", n)
	}
}

func TestChatCancelMidStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", chunk(`{"content":"first"}`, ""))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hang until the client goes away
	})
	p, _ := testProvider(t, OpenAI, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- p.Chat(ctx, provider.Request{Model: "gpt-4.1"}, func(e provider.Event) error {
			if e.Text == "first" {
				cancel()
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Chat did not return after cancel")
	}
}

func TestChatFirstByteTimeout(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	p, sl := testProvider(t, OpenAI, f, map[string]any{"max_retries": 1}, WithFirstByteTimeout(50*time.Millisecond))
	start := time.Now()
	_, err := chat(t, p, provider.Request{})
	if perr := asError(t, err); perr.Class != provider.ErrTimeout {
		t.Errorf("error = %v, want timeout", perr)
	}
	if len(f.requests()) != 2 || len(sl.got()) != 1 {
		t.Errorf("%d requests, %d sleeps; want 2, 1 (timeouts are retried)", len(f.requests()), len(sl.got()))
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestChatStreamTimeout(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "data: %s\n\n", chunk(`{"content":"slow"}`, ""))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	p, _ := testProvider(t, OpenAI, f, map[string]any{"timeout": "200ms"})
	_, err := chat(t, p, provider.Request{})
	if perr := asError(t, err); perr.Class != provider.ErrTimeout || !strings.Contains(perr.Message, "200ms") {
		t.Errorf("error = %v, want timeout naming 200ms", perr)
	}
}

func TestChatSendErrorStops(t *testing.T) {
	f := newFake(t, sseChunks(chunk(`{"content":"a"}`, ""), chunk(`{"content":"b"}`, "stop")))
	p, _ := testProvider(t, OpenAI, f, nil)
	stop := fmt.Errorf("surface gone")
	n := 0
	err := p.Chat(context.Background(), provider.Request{Model: "gpt-4.1"}, func(provider.Event) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("err = %v after %d events, want the send error after 1", err, n)
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

func TestChatGroqUsageAndDoneWithoutFinish(t *testing.T) {
	f := newFake(t, sseChunks(
		chunk(`{"content":"hi"}`, ""),
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{}}],`+
			`"x_groq":{"id":"req_1","usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}}`,
	))
	p, _ := testProvider(t, Groq, f, nil)
	got, err := chat(t, p, provider.Request{Model: "llama-3.3-70b-versatile"})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{{Text: "hi"}, {Usage: &provider.Usage{InputTokens: 7, OutputTokens: 2}}, {Stop: provider.StopEndTurn}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestChatJSONInsteadOfStream(t *testing.T) {
	f := newFake(t,
		func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"error":{"message":"Rate limit exceeded: free-models-per-day","code":429}}`)
		},
		jsonBody(`{"id":"chatcmpl-1","choices":[{"message":{"content":"hi"}}]}`),
	)
	p, _ := testProvider(t, OpenRouter, f, map[string]any{"max_retries": 0})
	_, err := chat(t, p, provider.Request{Model: "x"})
	if perr := asError(t, err); perr.Class != provider.ErrRateLimited || !strings.Contains(perr.Message, "free-models-per-day") {
		t.Errorf("error = %v", perr)
	}
	_, err = chat(t, p, provider.Request{Model: "x"})
	if perr := asError(t, err); perr.Class != provider.ErrServer || !strings.Contains(perr.Message, "expected an event stream") {
		t.Errorf("error = %v", perr)
	}
}

func TestChatSlowFirstEventIsNotATimeout(t *testing.T) {
	// A reasoning model may think long after the response has begun.
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(200 * time.Millisecond)
		sseChunks(chunk(`{"content":"done thinking"}`, "stop"))(w, nil)
	})
	p, _ := testProvider(t, OpenAI, f, nil, WithFirstByteTimeout(50*time.Millisecond))
	if _, err := chat(t, p, provider.Request{Model: "o3"}); err != nil {
		t.Fatal(err)
	}
}
