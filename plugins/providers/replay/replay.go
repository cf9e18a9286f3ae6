// Package replay is a provider that serves a recorded conversation: the
// Nth Chat call of a run gets the Nth recorded turn. It makes runs
// deterministic for demos, tests and `sparrow replay`, with real tools, the
// real sandbox and the real gate.
//
// A conversation file is JSON:
//
//	{"model": "replay-1", "turns": [
//	  {"expect": "optional substring of the last user message or tool result",
//	   "events": [{"thinking": "…"}, {"text": "…"},
//	              {"tool_call": {"id": "c1", "name": "read_file", "arguments": {"path": "x"}}},
//	              {"usage": {"input": 10, "output": 5}}, {"stop": "tool_use"}]}]}
//
// A turn may instead carry {"error": {"class": "rate_limited", "message": "…",
// "retry_after_ms": 100, "http_status": 429}} to replay a provider failure.
package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Conversation is a recorded sequence of model turns.
type Conversation struct {
	Model string `json:"model"`
	Turns []Turn `json:"turns"`
}

// Turn is one recorded model response.
type Turn struct {
	// Expect, when set, must occur in the request's last message; a replay
	// that has drifted from its recording stops instead of misleading.
	Expect string      `json:"expect,omitempty"`
	Events []TurnEvent `json:"events,omitempty"`
	Error  *TurnError  `json:"error,omitempty"`
}

// TurnEvent is one streamed piece; exactly one field is set.
type TurnEvent struct {
	Text     string         `json:"text,omitempty"`
	Thinking string         `json:"thinking,omitempty"`
	ToolCall *RecordedCall  `json:"tool_call,omitempty"`
	Usage    *RecordedUsage `json:"usage,omitempty"`
	Stop     string         `json:"stop,omitempty"`
}

// RecordedCall is a whole tool call; it is streamed as two deltas.
type RecordedCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// RecordedUsage counts tokens.
type RecordedUsage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// TurnError replays a provider failure.
type TurnError struct {
	Class        string `json:"class"`
	Message      string `json:"message"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	HTTPStatus   int    `json:"http_status,omitempty"`
}

// Replay is the provider.
type Replay struct {
	mu    sync.Mutex
	conv  *Conversation
	next  int
	delay time.Duration
}

// New returns an unconfigured replay provider.
func New() *Replay { return &Replay{} }

// Name implements provider.Provider.
func (*Replay) Name() string { return "replay" }

// Description implements plugin.Describer.
func (*Replay) Description() string { return "serves a recorded conversation, turn by turn" }

// ConfigSchema implements plugin.Configurable.
func (*Replay) ConfigSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "file", Type: plugin.String, Required: true, Description: "the conversation JSON file"},
		{Name: "delay", Type: plugin.Duration, Default: "0s", Description: "pause between streamed events, to watch a demo unfold"},
	}}
}

// Configure implements plugin.Configurable: it loads the conversation.
func (r *Replay) Configure(_ context.Context, c plugin.Config) error {
	var cfg struct {
		File  string `json:"file"`
		Delay string `json:"delay"`
	}
	if err := c.Decode(&cfg); err != nil {
		return err
	}
	conv, err := Load(cfg.File)
	if err != nil {
		return err
	}
	d, err := time.ParseDuration(cfg.Delay)
	if err != nil {
		return fmt.Errorf("delay %q: %w", cfg.Delay, err)
	}
	r.mu.Lock()
	r.conv, r.next, r.delay = conv, 0, d
	r.mu.Unlock()
	return nil
}

// Load reads and checks a conversation file.
func Load(path string) (*Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var conv Conversation
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conv); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if len(conv.Turns) == 0 {
		return nil, fmt.Errorf("replay: %s has no turns", path)
	}
	for i, t := range conv.Turns {
		if (t.Error == nil) == (len(t.Events) == 0) {
			return nil, fmt.Errorf("replay: %s: turn %d needs events or an error, not both", path, i+1)
		}
	}
	return &conv, nil
}

// Models implements provider.Provider.
func (r *Replay) Models(context.Context) ([]provider.Model, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := "replay"
	if r.conv != nil && r.conv.Model != "" {
		id = r.conv.Model
	}
	return []provider.Model{{ID: id, DisplayName: "recorded conversation", ContextWindow: 200000, SupportsTools: true}}, nil
}

// Chat implements provider.Provider: it streams the next recorded turn.
func (r *Replay) Chat(ctx context.Context, req provider.Request, send func(provider.Event) error) error {
	r.mu.Lock()
	if r.conv == nil {
		r.mu.Unlock()
		return &provider.Error{Class: provider.ErrBadRequest, Message: "replay: no conversation configured (set file)"}
	}
	if r.next >= len(r.conv.Turns) {
		r.mu.Unlock()
		return &provider.Error{Class: provider.ErrBadRequest, Message: fmt.Sprintf("replay: the recording has %d turns and all were served", len(r.conv.Turns))}
	}
	turn, n, delay := r.conv.Turns[r.next], r.next+1, r.delay
	r.next++
	r.mu.Unlock()
	if turn.Expect != "" && !strings.Contains(lastMessage(req), turn.Expect) {
		return &provider.Error{Class: provider.ErrBadRequest,
			Message: fmt.Sprintf("replay: turn %d expected the conversation to contain %q; the run has drifted from its recording", n, turn.Expect)}
	}
	if e := turn.Error; e != nil {
		return &provider.Error{Class: provider.ErrorClass(e.Class), Message: e.Message,
			RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond, HTTPStatus: e.HTTPStatus}
	}
	return stream(ctx, turn, delay, send)
}

func stream(ctx context.Context, turn Turn, delay time.Duration, send func(provider.Event) error) error {
	calls := 0
	for _, e := range turn.Events {
		if delay > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay):
			}
		}
		var err error
		switch {
		case e.ToolCall != nil:
			args := string(e.ToolCall.Arguments)
			if args == "" {
				args = "{}"
			}
			half := len(args) / 2
			err = send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: calls, ID: e.ToolCall.ID, Name: e.ToolCall.Name, ArgumentsDelta: args[:half]}})
			if err == nil {
				err = send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: calls, ArgumentsDelta: args[half:]}})
			}
			calls++
		case e.Thinking != "":
			err = send(provider.Event{Thinking: &provider.Thinking{Text: e.Thinking}})
		case e.Usage != nil:
			err = send(provider.Event{Usage: &provider.Usage{InputTokens: e.Usage.Input, OutputTokens: e.Usage.Output}})
		case e.Stop != "":
			err = send(provider.Event{Stop: provider.StopReason(e.Stop)})
		default:
			err = send(provider.Event{Text: e.Text})
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// lastMessage is the text of the request's last message, tool results
// included.
func lastMessage(req provider.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		switch {
		case p.ToolResult != nil:
			b.WriteString(p.ToolResult.Content)
		default:
			b.WriteString(p.Text)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

var (
	_ provider.Provider   = (*Replay)(nil)
	_ plugin.Configurable = (*Replay)(nil)
)
