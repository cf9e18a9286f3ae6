package anthropic

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func usageEv(in, out, read, write int64) provider.Event {
	return provider.Event{Usage: &provider.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: read, CacheWriteTokens: write}}
}

// streamCase is a scripted answer and the events it must produce.
type streamCase struct {
	name   string
	events []string
	want   []provider.Event
}

func streamCases() []streamCase {
	return []streamCase{{
		name: "text",
		events: []string{evStart, evTextOpen, evPing, textDelta(0, "Hello"), textDelta(0, ", world"),
			textDelta(0, ""), blockStop(0), evEndTurn, evStop},
		want: []provider.Event{{Text: "Hello"}, {Text: ", world"}, usageEv(25, 12, 0, 0), {Stop: provider.StopEndTurn}},
	}, {
		name: "thinking with signature",
		events: []string{evStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me check "}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the tests."}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}`,
			blockStop(0),
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			textDelta(1, "Done."), blockStop(1), evEndTurn, evStop},
		want: []provider.Event{
			{Thinking: &provider.Thinking{Text: "Let me check "}},
			{Thinking: &provider.Thinking{Text: "the tests."}},
			{Thinking: &provider.Thinking{Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}},
			{Text: "Done."}, usageEv(25, 12, 0, 0), {Stop: provider.StopEndTurn}},
	}, {
		name: "two tool calls, input split mid-token",
		events: []string{evStart, evTextOpen, textDelta(0, "Reading both."), blockStop(0),
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"read_file","input":{}}}`,
			jsonDelta(1, ""), jsonDelta(1, `{"pa`), jsonDelta(1, `th": "a.`), jsonDelta(1, `go"}`), blockStop(1),
			`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01B","name":"read_file","input":{}}}`,
			jsonDelta(2, `{"path": "b.go", "li`), jsonDelta(2, `mit": 10}`), blockStop(2),
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}`, evStop},
		want: []provider.Event{
			{Text: "Reading both."},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "toolu_01A", Name: "read_file"}},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `{"pa`}},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `th": "a.`}},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `go"}`}},
			{ToolCall: &provider.ToolCallDelta{Index: 1, ID: "toolu_01B", Name: "read_file"}},
			{ToolCall: &provider.ToolCallDelta{Index: 1, ArgumentsDelta: `{"path": "b.go", "li`}},
			{ToolCall: &provider.ToolCallDelta{Index: 1, ArgumentsDelta: `mit": 10}`}},
			usageEv(25, 89, 0, 0), {Stop: provider.StopToolUse}},
	}, {
		name: "tool call without input gets {}",
		events: []string{evStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"git_status","input":{}}}`,
			jsonDelta(0, ""), blockStop(0),
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`, evStop},
		want: []provider.Event{
			{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "toolu_1", Name: "git_status"}},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: "{}"}},
			usageEv(25, 30, 0, 0), {Stop: provider.StopToolUse}},
	}, {
		name: "cache usage",
		events: []string{
			`{"type":"message_start","message":{"id":"msg_2","usage":{"input_tokens":12,"cache_creation_input_tokens":1800,"cache_read_input_tokens":24000,"output_tokens":1}}}`,
			evTextOpen, textDelta(0, "ok"), blockStop(0),
			`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":1024}}`, evStop},
		want: []provider.Event{{Text: "ok"}, usageEv(12, 1024, 24000, 1800), {Stop: provider.StopMaxTokens}},
	}, {
		name:   "refusal",
		events: []string{evStart, `{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":3}}`, evStop},
		want:   []provider.Event{usageEv(25, 3, 0, 0), {Stop: provider.StopRefusal}},
	}, {
		name:   "stop_sequence is end_turn; unknown events ignored",
		events: []string{evStart, `{"type":"future_event","x":1}`, `{"type":"message_delta","delta":{"stop_reason":"stop_sequence"},"usage":{"output_tokens":3}}`, evStop},
		want:   []provider.Event{usageEv(25, 3, 0, 0), {Stop: provider.StopEndTurn}},
	}}
}

func TestStreams(t *testing.T) {
	for _, tc := range streamCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, events(tc.events...))
			got, err := h.chat(hello())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// TestStreamFraming covers SSE details: CRLF line ends, comments, "data:"
// without a space, and a final event without the trailing blank line.
func TestStreamFraming(t *testing.T) {
	body := ": keep-alive\r\nevent: message_start\r\ndata:" + evStart + "\r\n\r\n" +
		"event: content_block_delta\ndata: " + textDelta(0, "hi") + "\n\n" +
		"event: message_stop\ndata: " + evStop + "\n"
	h := newHarness(t, nil, streamOf(body))
	got, err := h.chat(hello())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{{Text: "hi"}, usageEv(25, 1, 0, 0), {Stop: provider.StopEndTurn}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestStreamFailures(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		class    provider.ErrorClass
		contains []string
		events   int
		requests int
	}{{
		name:     "malformed data line",
		body:     sse(evStart) + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_de\n\n",
		class:    provider.ErrServer,
		contains: []string{"malformed event at line 5", `"type":"text_de`},
		requests: 3, // nothing streamed, so retried
	}, {
		name: "stream cut mid tool_use",
		body: sse(evStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"write_file","input":{}}}`,
			jsonDelta(0, `{"path":"a.go","con`)),
		class:    provider.ErrServer,
		contains: []string{"stream ended early", "toolu_9 (write_file)"},
		events:   2,
		requests: 1, // streamed already: never retried
	}, {
		name:     "mid-stream error event",
		body:     sse(evStart, evTextOpen, textDelta(0, "Let me"), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		class:    provider.ErrOverloaded,
		contains: []string{"Overloaded"},
		events:   1,
		requests: 1,
	}, {
		name:     "error event before any output is retried",
		body:     sse(evStart, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
		class:    provider.ErrServer,
		contains: []string{"api_error: Internal server error", "gave up after 3 attempts"},
		requests: 3,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, streamOf(tc.body))
			got, err := h.chat(hello())
			var perr *provider.Error
			if !errors.As(err, &perr) || perr.Class != tc.class {
				t.Fatalf("err = %v, want class %s", err, tc.class)
			}
			for _, s := range tc.contains {
				if !strings.Contains(perr.Message, s) {
					t.Errorf("message %q lacks %q", perr.Message, s)
				}
			}
			if len(got) != tc.events || len(h.fake.requests()) != tc.requests {
				t.Errorf("%d events, %d requests; want %d, %d", len(got), len(h.fake.requests()), tc.events, tc.requests)
			}
		})
	}
}

// TestCancelMidStream: cancelling the caller's context ends Chat promptly
// with the context's error, even while the server keeps the stream open.
func TestCancelMidStream(t *testing.T) {
	h := newHarness(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		_, _ = io.WriteString(w, sse(evStart, evTextOpen, textDelta(0, "thinking about it")))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- h.Chat(ctx, hello(), func(provider.Event) error {
			close(first)
			return nil
		})
	}()
	<-first
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("returned after %v", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Chat ignored cancellation")
	}
}

// TestTimeoutMidStream: the configured timeout ends a stalled stream as a
// timeout, not retried because output was already sent.
func TestTimeoutMidStream(t *testing.T) {
	h := newHarness(t, map[string]any{"timeout": "200ms"}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		_, _ = io.WriteString(w, sse(evStart, evTextOpen, textDelta(0, "so")))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	got, err := h.chat(hello())
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrTimeout {
		t.Fatalf("err = %v, want timeout", err)
	}
	if len(got) != 1 || len(h.fake.requests()) != 1 {
		t.Errorf("%d events, %d requests", len(got), len(h.fake.requests()))
	}
}

// TestSendErrorStops: a failing send (the kernel went away) ends the turn
// with that error.
func TestSendErrorStops(t *testing.T) {
	h := newHarness(t, nil, events(evStart, evTextOpen, textDelta(0, "a"), textDelta(0, "b"), evEndTurn, evStop))
	boom := errors.New("stream closed")
	n := 0
	err := h.Chat(context.Background(), hello(), func(provider.Event) error { n++; return boom })
	if !errors.Is(err, boom) || n != 1 || len(h.fake.requests()) != 1 {
		t.Fatalf("err = %v after %d sends, %d requests", err, n, len(h.fake.requests()))
	}
}
