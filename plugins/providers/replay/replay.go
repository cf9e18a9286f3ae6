// Package replay is a provider that serves a recorded conversation: the
// Nth Chat call of a run gets the Nth recorded turn. It makes runs
// deterministic for demos, tests and `sparrow replay`, with real tools, the
// real sandbox and the real gate.
//
// The conversation file format is sdk/replay's.
package replay

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	conversation "github.com/sparrow-cli/sparrow/sdk/replay"
)

// Replay is the provider.
type Replay struct {
	mu    sync.Mutex
	conv  *conversation.Conversation
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
	conv, err := conversation.Load(cfg.File)
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

func stream(ctx context.Context, turn conversation.Turn, delay time.Duration, send func(provider.Event) error) error {
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
