package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// maxEventBytes bounds one SSE line; a longer one fails the stream.
const maxEventBytes = 8 << 20

// stream sends one request and streams its answer to send. The attempt is
// bounded by the configured timeout; the caller's cancellation ends it at
// once, body read included.
func (a *Anthropic) stream(ctx context.Context, cfg settings, key string, body []byte, send func(provider.Event) error) error {
	actx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, cfg.BaseURL+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return &provider.Error{Class: provider.ErrBadRequest, Message: err.Error()}
	}
	setHeaders(req.Header, cfg, key)
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "text/event-stream")
	resp, err := a.client.Do(req)
	if err != nil {
		return transportError(ctx, actx, cfg.timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return httpError(resp, a.now())
	}
	err = newDecoder(send).read(resp.Body)
	if err != nil && actx.Err() != nil {
		return transportError(ctx, actx, cfg.timeout, actx.Err())
	}
	return err
}

// setHeaders sets what every API request carries.
func setHeaders(h http.Header, cfg settings, key string) {
	h.Set("x-api-key", key)
	h.Set("anthropic-version", cfg.AnthropicVersion)
	h.Set("user-agent", userAgent)
	if len(cfg.Beta) > 0 {
		h.Set("anthropic-beta", strings.Join(cfg.Beta, ","))
	}
}

// decoder turns the Messages API's server-sent events into provider
// events: deltas as they come, then Usage and Stop at message_stop.
type decoder struct {
	send  func(provider.Event) error
	tools map[int]*openTool // by content block index
	usage provider.Usage
	stop  provider.StopReason
}

// openTool is a tool_use block being streamed.
type openTool struct {
	index   int // dense tool-call index within the turn
	id      string
	name    string
	hasArgs bool
}

func newDecoder(send func(provider.Event) error) *decoder {
	return &decoder{send: send, tools: map[int]*openTool{}}
}

// read consumes the stream up to message_stop. SSE framing: lines
// "event: NAME" and "data: JSON", a blank line ending each event; lines
// starting with ":" are comments. The event's JSON "type" decides; the
// event line is only a fallback.
func (d *decoder) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEventBytes)
	var name string
	var data strings.Builder
	line, dataLine := 0, 0
	dispatch := func() (bool, error) {
		if data.Len() == 0 {
			name = ""
			return false, nil
		}
		done, err := d.handle(name, data.String(), dataLine)
		name = ""
		data.Reset()
		return done, err
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		field, value, _ := strings.Cut(text, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case text == "":
			if done, err := dispatch(); done || err != nil {
				return err
			}
		case field == "event":
			name = value
		case field == "data":
			if data.Len() == 0 {
				dataLine = line
			} else {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
	if err := sc.Err(); err != nil {
		return &provider.Error{Class: provider.ErrServer, Message: fmt.Sprintf("reading the stream after line %d: %v", line, err)}
	}
	if done, err := dispatch(); done || err != nil {
		return err
	}
	return &provider.Error{Class: provider.ErrServer, Message: "stream ended early, before message_stop" + d.pending()}
}

// pending describes what was cut off, for the early-end error.
func (d *decoder) pending() string {
	for _, i := range slices.Sorted(maps.Keys(d.tools)) {
		if t := d.tools[i]; t != nil {
			return fmt.Sprintf(", in the middle of tool call %s (%s)", t.id, t.name)
		}
	}
	return ""
}

// sseEvent is the union of the stream's event payloads.
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

// usage counts tokens; a field the event leaves out is nil.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// apply overwrites the counts the event carries. message_start carries
// the input side; message_delta the cumulative output (and, in newer API
// versions, cumulative input and cache counts).
func (u usage) apply(to *provider.Usage) {
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&to.InputTokens, u.InputTokens)
	set(&to.OutputTokens, u.OutputTokens)
	set(&to.CacheWriteTokens, u.CacheCreationInputTokens)
	set(&to.CacheReadTokens, u.CacheReadInputTokens)
}

// handle processes one event; done is true after message_stop.
func (d *decoder) handle(name, data string, line int) (done bool, err error) {
	var ev sseEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return false, &provider.Error{Class: provider.ErrServer,
			Message: fmt.Sprintf("malformed event at line %d of the stream: %v: data: %.200s", line, err, data)}
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "message_start":
		ev.Message.Usage.apply(&d.usage)
	case "content_block_start":
		return false, d.blockStart(ev)
	case "content_block_delta":
		return false, d.delta(ev)
	case "content_block_stop":
		return false, d.blockStop(ev.Index)
	case "message_delta":
		ev.Usage.apply(&d.usage)
		if ev.Delta.StopReason != "" {
			d.stop = stopReason(ev.Delta.StopReason)
		}
	case "message_stop":
		return true, d.finish()
	case "error":
		return false, streamError(ev.Error)
	}
	// ping and event types added after this was written are ignored.
	return false, nil
}

func (d *decoder) blockStart(ev sseEvent) error {
	if ev.ContentBlock.Type != "tool_use" {
		return nil // text and thinking start empty; others are not ours to stream
	}
	t := &openTool{index: len(d.tools), id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
	d.tools[ev.Index] = t
	return d.send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: t.index, ID: t.id, Name: t.name}})
}

// blockStop ends a block; a tool call that got no input gets "{}".
func (d *decoder) blockStop(index int) error {
	t := d.tools[index]
	if t == nil {
		return nil
	}
	d.tools[index] = nil // closed, but still counted for dense indices
	if t.hasArgs {
		return nil
	}
	return d.send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: t.index, ArgumentsDelta: "{}"}})
}

func (d *decoder) delta(ev sseEvent) error {
	switch ev.Delta.Type {
	case "text_delta":
		if ev.Delta.Text != "" {
			return d.send(provider.Event{Text: ev.Delta.Text})
		}
	case "thinking_delta":
		if ev.Delta.Thinking != "" {
			return d.send(provider.Event{Thinking: &provider.Thinking{Text: ev.Delta.Thinking}})
		}
	case "signature_delta":
		if ev.Delta.Signature != "" {
			return d.send(provider.Event{Thinking: &provider.Thinking{Signature: ev.Delta.Signature}})
		}
	case "input_json_delta":
		t := d.tools[ev.Index]
		if t == nil || ev.Delta.PartialJSON == "" {
			return nil // a server tool's input, or an empty fragment
		}
		t.hasArgs = true
		return d.send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: t.index, ArgumentsDelta: ev.Delta.PartialJSON}})
	}
	return nil
}

// finish sends the turn's usage and stop reason.
func (d *decoder) finish() error {
	for _, i := range slices.Sorted(maps.Keys(d.tools)) {
		if d.tools[i] != nil {
			if err := d.blockStop(i); err != nil {
				return err
			}
		}
	}
	u := d.usage
	if err := d.send(provider.Event{Usage: &u}); err != nil {
		return err
	}
	if d.stop == "" {
		d.stop = provider.StopEndTurn
	}
	return d.send(provider.Event{Stop: d.stop})
}

// stopReason maps the API's stop_reason.
func stopReason(s string) provider.StopReason {
	switch s {
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return provider.StopMaxTokens
	case "refusal":
		return provider.StopRefusal
	}
	return provider.StopEndTurn // end_turn, stop_sequence, pause_turn
}
