package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// fake is an Anthropic API server on 127.0.0.1. Each request is recorded
// and answered by the next scripted handler (the last one repeats).
type fake struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	handlers []http.HandlerFunc
	reqs     []recorded
}

// recorded is one request the fake received.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

func newFake(t *testing.T, handlers ...http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{t: t, handlers: handlers}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(f.serve)}}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	h := f.handlers[min(n, len(f.handlers)-1)]
	f.mu.Unlock()
	h(w, r)
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// sse frames events as the API does: `event: TYPE\ndata: JSON\n\n`, the
// type read from the JSON.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
	return b.String()
}

// streamOf answers 200 with the given raw SSE body, flushed event by
// event as a real server does.
func streamOf(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Header().Set("request-id", "req_ok")
		for _, chunk := range strings.SplitAfter(body, "\n\n") {
			_, _ = io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		}
	}
}

// events answers with the given events framed by sse.
func events(evs ...string) http.HandlerFunc { return streamOf(sse(evs...)) }

// apiErr answers an error in the API's shape, with header name/value pairs.
func apiErr(code int, errType, msg string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("request-id", "req_err")
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, errType, msg)
	}
}

// Events of a typical answer.
const (
	evStart    = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`
	evPing     = `{"type":"ping"}`
	evEndTurn  = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`
	evStop     = `{"type":"message_stop"}`
	evTextOpen = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
)

func textDelta(index int, text string) string {
	b, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": index,
		"delta": map[string]string{"type": "text_delta", "text": text}})
	return string(b)
}

func jsonDelta(index int, partial string) string {
	b, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": index,
		"delta": map[string]string{"type": "input_json_delta", "partial_json": partial}})
	return string(b)
}

func blockStop(index int) string {
	return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index)
}

// harness is a configured provider talking to a fake, with a recording
// sleeper and no jitter (backoff waits are their ceilings).
type harness struct {
	*Anthropic
	fake  *fake
	slept []time.Duration
}

func newHarness(t *testing.T, cfg map[string]any, handlers ...http.HandlerFunc) *harness {
	t.Helper()
	h := &harness{Anthropic: New(), fake: newFake(t, handlers...)}
	h.getenv = func(string) string { return "" }
	h.jitter = func(ceil time.Duration) time.Duration { return ceil }
	h.sleep = func(ctx context.Context, d time.Duration) error {
		h.slept = append(h.slept, d)
		return ctx.Err()
	}
	values := map[string]any{"base_url": h.fake.srv.URL, "api_key": "sk-ant-test", "timeout": "10s",
		"max_retries": 2, "max_tokens": 1024, "prompt_caching": false}
	for k, v := range cfg {
		values[k] = v
	}
	raw, _ := json.Marshal(values)
	if err := h.Configure(context.Background(), plugin.Config{Values: raw}); err != nil {
		t.Fatal(err)
	}
	return h
}

// chat runs one turn, collecting its events.
func (h *harness) chat(req provider.Request) ([]provider.Event, error) {
	var got []provider.Event
	err := h.Chat(context.Background(), req, func(e provider.Event) error {
		got = append(got, e)
		return nil
	})
	return got, err
}

// hello is a minimal request.
func hello() provider.Request {
	return provider.Request{Model: "claude-sonnet-4-5",
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "hello"}}}}}
}
