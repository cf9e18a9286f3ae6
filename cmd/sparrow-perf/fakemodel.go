package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Vendors the fake model server speaks.
const (
	vendorOpenAI    = "openai"
	vendorAnthropic = "anthropic"
)

// exchange is one model request as the fake server saw it.
type exchange struct {
	// arrived is when the request's headers were read; done is when the
	// last byte of the answer was flushed.
	arrived, done time.Time
	// bodyBytes is the request body's size: what the client sends per
	// turn (system prompt, tool schemas, transcript).
	bodyBytes int
}

// fakeModel is a model API on loopback that answers request N (from 1)
// with one shell tool call `printf 'step-N'` while N < turns, then with a
// final text. Request N+1 must carry step-N as a tool result, so a turn
// counts only when the tool really ran.
type fakeModel struct {
	vendor string
	turns  int
	// dump, when set, receives the first request's body.
	dump string
	srv  *http.Server
	url  string

	mu        sync.Mutex
	exchanges []exchange
	err       error
}

// startFakeModel listens on 127.0.0.1 and serves vendor's wire format.
func startFakeModel(vendor string, turns int) (*fakeModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake model: %w", err)
	}
	m := &fakeModel{vendor: vendor, turns: turns, url: "http://" + ln.Addr().String()}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// Close stops the server.
func (m *fakeModel) Close() { _ = m.srv.Close() }

// reset forgets the previous run.
func (m *fakeModel) reset() {
	m.mu.Lock()
	m.exchanges, m.err = nil, nil
	m.mu.Unlock()
}

// result is what one run sent: its exchanges, or the first protocol
// error (a request that did not carry the previous step's output).
func (m *fakeModel) result() ([]exchange, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]exchange(nil), m.exchanges...), m.err
}

func (m *fakeModel) fail(err error) {
	m.mu.Lock()
	if m.err == nil {
		m.err = err
	}
	m.mu.Unlock()
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		// A model listing (prices, limits); not a turn.
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"has_more":false}`)
		return
	case r.Method != http.MethodPost:
		http.Error(w, "fake model: unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	n := len(m.exchanges) + 1
	m.exchanges = append(m.exchanges, exchange{arrived: arrived, bodyBytes: len(body)})
	m.mu.Unlock()
	if n == 1 && m.dump != "" {
		_ = os.WriteFile(m.dump, body, 0o644)
	}
	if n > 1 {
		if err := checkToolResult(m.vendor, body, fmt.Sprintf("step-%d", n-1)); err != nil {
			m.fail(fmt.Errorf("request %d: %w", n, err))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	final := n >= m.turns
	if m.vendor == vendorAnthropic {
		writeAnthropic(w, n, final)
	} else {
		writeOpenAI(w, n, final)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	m.mu.Lock()
	m.exchanges[n-1].done = time.Now()
	m.mu.Unlock()
}

// checkToolResult finds the last message of a request and checks it is
// the tool's result holding want.
func checkToolResult(vendor string, body []byte, want string) error {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("request body is not JSON: %w", err)
	}
	if len(req.Messages) == 0 {
		return fmt.Errorf("no messages")
	}
	last := req.Messages[len(req.Messages)-1]
	var text string
	switch vendor {
	case vendorAnthropic:
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(last.Content, &blocks); err != nil || last.Role != "user" {
			return fmt.Errorf("last message is not a user message of content blocks")
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				text += string(b.Content)
			}
		}
	default:
		if last.Role != "tool" {
			return fmt.Errorf("last message has role %q, want tool", last.Role)
		}
		text = string(last.Content)
	}
	if !strings.Contains(text, want) {
		return fmt.Errorf("the tool result does not carry %q: %.200s", want, text)
	}
	return nil
}

// The tool call's arguments arrive in pieces, as real servers send them.
func argPieces(n int) []string {
	return []string{`{"comm`, `and": "printf `, fmt.Sprintf(`'step-%d'"}`, n)}
}

func writeOpenAI(w io.Writer, n int, final bool) {
	chunk := func(delta, finish string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1-mini\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", n, delta, fin)
	}
	if final {
		chunk(`{"role":"assistant","content":"All "}`, "")
		chunk(`{"content":"steps done."}`, "")
		chunk(`{}`, "stop")
	} else {
		chunk(fmt.Sprintf(`{"role":"assistant","content":"Step %d."}`, n), "")
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"shell","arguments":""}}]}`, n), "")
		for _, p := range argPieces(n) {
			js, _ := json.Marshal(p)
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, js), "")
		}
		chunk(`{}`, "tool_calls")
	}
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":12,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", n, 500+100*n, 512+100*n)
}

func writeAnthropic(w io.Writer, n int, final bool) {
	ev := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, n, 500+100*n))
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	text := fmt.Sprintf("Step %d.", n)
	if final {
		text = "All steps done."
	}
	js, _ := json.Marshal(text)
	ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, js))
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	stop := "end_turn"
	if !final {
		stop = "tool_use"
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_%d","name":"shell","input":{}}}`, n))
		for _, p := range argPieces(n) {
			js, _ := json.Marshal(p)
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":%s}}`, js))
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	}
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":12}}`, stop))
	ev("message_stop", `{"type":"message_stop"}`)
}
