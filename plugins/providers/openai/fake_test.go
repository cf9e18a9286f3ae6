package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// fake is an OpenAI API server on 127.0.0.1. Each request is recorded and
// answered by the next scripted handler (the last one repeats).
type fake struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	handlers []http.HandlerFunc
	reqs     []recorded
}

// recorded is one request the fake received.
type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

func newFake(t *testing.T, handlers ...http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{t: t, handlers: handlers}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	h := f.handlers[min(n, len(f.handlers)-1)]
	f.mu.Unlock()
	h(w, r)
}

// URL is the base URL to configure, ending in /v1.
func (f *fake) URL() string { return f.srv.URL + "/v1" }

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// body decodes the n-th request's JSON body.
func (f *fake) body(n int) map[string]any {
	f.t.Helper()
	reqs := f.requests()
	if n >= len(reqs) {
		f.t.Fatalf("only %d requests, want #%d", len(reqs), n)
	}
	var m map[string]any
	if err := json.Unmarshal(reqs[n].Body, &m); err != nil {
		f.t.Fatalf("request body: %v: %s", err, reqs[n].Body)
	}
	return m
}

// sseChunks answers with Chat Completions chunks framed as OpenAI does:
// `data: {...}\n\n` per chunk, then `data: [DONE]\n\n`. Each chunk is
// flushed on its own.
func sseChunks(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// raw answers with the bytes given, flushing between pieces.
func raw(pieces ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range pieces {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}
}

// jsonError answers with an OpenAI error body.
func jsonError(status int, typ, code, msg string, header map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		c := "null"
		if code != "" {
			c = fmt.Sprintf("%q", code)
		}
		fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, msg, typ, c)
	}
}

// sleeper records backoff waits without waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// testProvider returns a configured component talking to f, with the
// backoff's jitter pinned to its ceiling and sleeps recorded.
func testProvider(t *testing.T, component string, f *fake, cfg map[string]any, opts ...Option) (*Provider, *sleeper) {
	t.Helper()
	sl := &sleeper{}
	opts = append([]Option{WithSleep(sl.sleep), WithJitter(func(d time.Duration) time.Duration { return d }),
		WithGetenv(func(string) string { return "" })}, opts...)
	p, err := New(component, opts...)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"api_key": "sk-test"}
	if f != nil {
		values["base_url"] = f.URL()
	}
	for k, v := range cfg {
		values[k] = v
	}
	b, _ := json.Marshal(values)
	if err := p.Configure(context.Background(), plugin.Config{Values: b}); err != nil {
		t.Fatal(err)
	}
	return p, sl
}

// chat runs one request, returning the events and the error.
func chat(t *testing.T, p provider.Provider, req provider.Request) ([]provider.Event, error) {
	t.Helper()
	if req.Model == "" {
		req.Model = "gpt-4.1"
	}
	if req.Messages == nil {
		req.Messages = []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "hi"}}}}
	}
	var got []provider.Event
	err := p.Chat(context.Background(), req, func(e provider.Event) error {
		got = append(got, e)
		return nil
	})
	return got, err
}

// asError returns err as *provider.Error or fails the test.
func asError(t *testing.T, err error) *provider.Error {
	t.Helper()
	perr, ok := err.(*provider.Error)
	if !ok {
		t.Fatalf("got %T %v, want *provider.Error", err, err)
	}
	return perr
}
