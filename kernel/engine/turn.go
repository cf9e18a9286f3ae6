package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// reply is one model turn, assembled from its stream.
type reply struct {
	text      strings.Builder
	thinking  strings.Builder
	signature string
	calls     map[int]*pendingCall
	usage     provider.Usage
	stop      provider.StopReason
	streamed  bool
}

type pendingCall struct {
	id, name string
	args     strings.Builder
}

func (r *reply) add(ev provider.Event) {
	r.streamed = true
	switch {
	case ev.ToolCall != nil:
		if r.calls == nil {
			r.calls = map[int]*pendingCall{}
		}
		c := r.calls[ev.ToolCall.Index]
		if c == nil {
			c = &pendingCall{}
			r.calls[ev.ToolCall.Index] = c
		}
		if ev.ToolCall.ID != "" {
			c.id = ev.ToolCall.ID
		}
		if ev.ToolCall.Name != "" {
			c.name = ev.ToolCall.Name
		}
		c.args.WriteString(ev.ToolCall.ArgumentsDelta)
	case ev.Thinking != nil:
		r.thinking.WriteString(ev.Thinking.Text)
		if ev.Thinking.Signature != "" {
			r.signature = ev.Thinking.Signature
		}
	case ev.Usage != nil:
		r.usage = *ev.Usage
	case ev.Stop != "":
		r.stop = ev.Stop
	default:
		r.text.WriteString(ev.Text)
	}
}

// toolCalls returns the turn's calls in index order, ids filled in.
func (r *reply) toolCalls(turn int) []provider.ToolCall {
	idx := make([]int, 0, len(r.calls))
	for i := range r.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]provider.ToolCall, 0, len(idx))
	for n, i := range idx {
		c := r.calls[i]
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", turn, n+1)
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		out = append(out, provider.ToolCall{ID: id, Name: c.name, ArgumentsJSON: args})
	}
	return out
}

// message is the assistant message the turn adds to the transcript.
func (r *reply) message(calls []provider.ToolCall) provider.Message {
	m := provider.Message{Role: provider.RoleAssistant}
	if r.thinking.Len() > 0 || r.signature != "" {
		m.Parts = append(m.Parts, provider.Part{Thinking: &provider.Thinking{Text: r.thinking.String(), Signature: r.signature}})
	}
	if r.text.Len() > 0 {
		m.Parts = append(m.Parts, provider.Part{Text: r.text.String()})
	}
	for i := range calls {
		m.Parts = append(m.Parts, provider.Part{ToolCall: &calls[i]})
	}
	return m
}

// fallbackOn says which failures move the run to the next model.
func fallbackOn(c provider.ErrorClass) bool {
	switch c {
	case provider.ErrRateLimited, provider.ErrOverloaded, provider.ErrServer, provider.ErrTimeout, provider.ErrRefusal:
		return true
	}
	return false
}

// chat streams one model turn, moving down the fallback chain on failures
// the router acts on. *route is the index of the model in use.
func (e *Engine) chat(ctx context.Context, route *int, msgs []provider.Message) (*reply, error) {
	specs := e.toolSpecs()
	for {
		r := e.o.Routes[*route]
		rep := &reply{}
		req := provider.Request{Model: r.Model, System: e.o.System, Messages: msgs, Tools: specs, MaxOutputTokens: e.o.MaxOutputTokens, Seed: r.Seed}
		err := r.Provider.Chat(ctx, req, func(ev provider.Event) error {
			rep.add(ev)
			switch {
			case ev.Thinking != nil && ev.Thinking.Text != "":
				e.publish(&event.ThinkingDelta{Text: ev.Thinking.Text})
			case ev.ToolCall == nil && ev.Usage == nil && ev.Stop == "" && ev.Thinking == nil && ev.Text != "":
				e.publish(&event.Message{Role: "assistant", Text: ev.Text, Delta: true})
			}
			return ctx.Err()
		})
		if err == nil {
			if rep.text.Len() > 0 {
				e.publish(&event.Message{Role: "assistant", Text: rep.text.String()})
			}
			e.account(r, rep.usage)
			if rep.stop == provider.StopRefusal && *route+1 < len(e.o.Routes) {
				err = &provider.Error{Class: provider.ErrRefusal, Message: "the model refused"}
			} else {
				return rep, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var perr *provider.Error
		if !errors.As(err, &perr) || !fallbackOn(perr.Class) || *route+1 >= len(e.o.Routes) {
			return nil, err
		}
		next := e.o.Routes[*route+1]
		if rep.streamed {
			e.publish(&event.Error{Source: "provider", Class: string(perr.Class),
				Message: fmt.Sprintf("%s failed mid-answer (%v); its partial answer is discarded", r.Name, err)})
		}
		e.publish(&event.ModelSwitched{From: r.Name, To: next.Name, Reason: err.Error(), ErrorClass: string(perr.Class)})
		*route++
	}
}

// account adds a turn's usage and cost and publishes them.
func (e *Engine) account(r Route, u provider.Usage) {
	turnCost := (float64(u.InputTokens)*r.Price.Input + float64(u.OutputTokens)*r.Price.Output +
		float64(u.CacheReadTokens)*r.Price.CacheRead + float64(u.CacheWriteTokens)*r.Price.CacheWrite) / 1e6
	e.mu.Lock()
	e.in += u.InputTokens
	e.out += u.OutputTokens
	e.cost += turnCost
	in, out, total := e.in, e.out, e.cost
	e.mu.Unlock()
	e.publish(&event.TokenUsage{Model: r.Name, Input: u.InputTokens, Output: u.OutputTokens,
		CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, TotalInput: in, TotalOutput: out})
	e.publish(&event.CostUpdate{Model: r.Name, TurnUSD: turnCost, TotalUSD: total, Priced: r.Price.Known})
}

func (e *Engine) toolSpecs() []provider.ToolSpec {
	out := make([]provider.ToolSpec, 0, len(e.o.Tools))
	for _, t := range e.o.Tools {
		s := t.Spec()
		out = append(out, provider.ToolSpec{Name: s.Name, Description: s.Description, InputSchemaJSON: string(s.InputSchema)})
	}
	return out
}
