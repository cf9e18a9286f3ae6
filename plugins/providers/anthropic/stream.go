package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// attempt sends one request and streams its answer. streamed reports
// whether anything reached send, after which a retry would duplicate.
func (a *Anthropic) attempt(ctx context.Context, cfg settings, body []byte, send func(provider.Event) error) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.BaseURL+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return false, &provider.Error{Class: provider.ErrBadRequest, Message: err.Error()}
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "text/event-stream")
	req.Header.Set("x-api-key", a.key(cfg))
	req.Header.Set("anthropic-version", cfg.AnthropicVersion)
	if len(cfg.Beta) > 0 {
		req.Header.Set("anthropic-beta", strings.Join(cfg.Beta, ","))
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return false, transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, httpError(resp)
	}
	s := &streamer{send: send, toolIndex: map[int]int{}}
	err = s.read(resp.Body)
	if err != nil && ctx.Err() != nil {
		err = transportError(ctx, ctx.Err())
	}
	return s.streamed, err
}

// streamer turns the Messages SSE stream into provider events.
type streamer struct {
	send      func(provider.Event) error
	streamed  bool
	toolIndex map[int]int // content block index → tool call index
	usage     provider.Usage
	stop      provider.StopReason
	done      bool
}

func (s *streamer) emit(e provider.Event) error {
	s.streamed = true
	return s.send(e)
}

func (s *streamer) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var data strings.Builder
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case text == "":
			if data.Len() > 0 {
				if err := s.handle(data.String(), line); err != nil {
					return err
				}
				data.Reset()
			}
		case strings.HasPrefix(text, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(text, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return &provider.Error{Class: provider.ErrServer, Message: "reading the stream: " + err.Error()}
	}
	if data.Len() > 0 {
		if err := s.handle(data.String(), line); err != nil {
			return err
		}
	}
	if !s.done {
		return &provider.Error{Class: provider.ErrServer, Message: "stream ended early, before message_stop"}
	}
	return nil
}

type sseEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage usage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage usage     `json:"usage"`
	Error *apiError `json:"error"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func (s *streamer) handle(data string, line int) error {
	var ev sseEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return &provider.Error{Class: provider.ErrServer, Message: fmt.Sprintf("malformed stream event before line %d: %v: %.80s", line, err, data)}
	}
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		s.usage = provider.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	case "content_block_start":
		if ev.ContentBlock.Type == "tool_use" {
			idx := len(s.toolIndex)
			s.toolIndex[ev.Index] = idx
			return s.emit(provider.Event{ToolCall: &provider.ToolCallDelta{Index: idx, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}})
		}
	case "content_block_delta":
		return s.delta(ev)
	case "message_delta":
		if ev.Usage.OutputTokens > 0 {
			s.usage.OutputTokens = ev.Usage.OutputTokens
		}
		s.stop = stopReason(ev.Delta.StopReason)
	case "message_stop":
		s.done = true
		if err := s.emit(provider.Event{Usage: &s.usage}); err != nil {
			return err
		}
		if s.stop == "" {
			s.stop = provider.StopEndTurn
		}
		return s.emit(provider.Event{Stop: s.stop})
	case "error":
		if ev.Error != nil {
			return ev.Error.classify(0, 0)
		}
		return &provider.Error{Class: provider.ErrServer, Message: "error event without detail"}
	}
	return nil
}

func (s *streamer) delta(ev sseEvent) error {
	switch ev.Delta.Type {
	case "text_delta":
		return s.emit(provider.Event{Text: ev.Delta.Text})
	case "thinking_delta":
		return s.emit(provider.Event{Thinking: &provider.Thinking{Text: ev.Delta.Thinking}})
	case "signature_delta":
		return s.emit(provider.Event{Thinking: &provider.Thinking{Signature: ev.Delta.Signature}})
	case "input_json_delta":
		idx, ok := s.toolIndex[ev.Index]
		if !ok {
			return &provider.Error{Class: provider.ErrServer, Message: fmt.Sprintf("input_json_delta for block %d, which is not a tool_use", ev.Index)}
		}
		return s.emit(provider.Event{ToolCall: &provider.ToolCallDelta{Index: idx, ArgumentsDelta: ev.Delta.PartialJSON}})
	}
	return nil
}

func stopReason(s string) provider.StopReason {
	switch s {
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens":
		return provider.StopMaxTokens
	case "refusal":
		return provider.StopRefusal
	case "":
		return ""
	}
	return provider.StopEndTurn
}
