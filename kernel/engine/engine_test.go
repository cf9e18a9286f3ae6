package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// script is a fake provider: each Chat call plays the next turn.
type script struct {
	name  string
	mu    sync.Mutex
	turns []func(req provider.Request, send func(provider.Event) error) error
	seen  []provider.Request
}

func (s *script) Name() string                                     { return s.name }
func (s *script) Models(context.Context) ([]provider.Model, error) { return nil, nil }
func (s *script) Chat(ctx context.Context, req provider.Request, send func(provider.Event) error) error {
	s.mu.Lock()
	s.seen = append(s.seen, req)
	if len(s.turns) == 0 {
		s.mu.Unlock()
		return &provider.Error{Class: provider.ErrBadRequest, Message: "script exhausted"}
	}
	turn := s.turns[0]
	s.turns = s.turns[1:]
	s.mu.Unlock()
	return turn(req, send)
}

// say returns a turn that streams text and tool calls, then stops.
func say(text string, calls ...provider.ToolCall) func(provider.Request, func(provider.Event) error) error {
	return func(_ provider.Request, send func(provider.Event) error) error {
		if text != "" {
			for _, w := range strings.SplitAfter(text, " ") {
				if err := send(provider.Event{Text: w}); err != nil {
					return err
				}
			}
		}
		for i, c := range calls {
			half := len(c.ArgumentsJSON) / 2
			send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: c.ArgumentsJSON[:half]}})
			send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: i, ArgumentsDelta: c.ArgumentsJSON[half:]}})
		}
		send(provider.Event{Usage: &provider.Usage{InputTokens: 1000, OutputTokens: 100}})
		stop := provider.StopEndTurn
		if len(calls) > 0 {
			stop = provider.StopToolUse
		}
		return send(provider.Event{Stop: stop})
	}
}

func fail(class provider.ErrorClass) func(provider.Request, func(provider.Event) error) error {
	return func(provider.Request, func(provider.Event) error) error {
		return &provider.Error{Class: class, Message: "scripted " + string(class), HTTPStatus: 429}
	}
}

func call(id, name, args string) provider.ToolCall {
	return provider.ToolCall{ID: id, Name: name, ArgumentsJSON: args}
}

// fakeTool is an in-process tool.
type fakeTool struct {
	spec tool.Spec
	run  func(ctx context.Context, c *tool.Call) (tool.Result, error)
}

func (f fakeTool) Spec() tool.Spec { return f.spec }
func (f fakeTool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	return f.run(ctx, c)
}

var schema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"command":{"type":"string"}}}`)

// fakeSandbox records commands and answers them.
type fakeSandbox struct {
	mu   sync.Mutex
	argv [][]string
	// network is each command's ExecRequest.AllowNetwork, in order.
	network []bool
	code    int
}

func (*fakeSandbox) Name() string { return "fake" }
func (*fakeSandbox) Capabilities(context.Context) (sandbox.Capabilities, error) {
	return sandbox.Capabilities{Available: true}, nil
}
func (*fakeSandbox) Prepare(context.Context, sandbox.PrepareRequest) (sandbox.Session, error) {
	return sandbox.Session{ID: "s1", Workdir: "/ws"}, nil
}
func (*fakeSandbox) Teardown(context.Context, string) (sandbox.Released, error) {
	return sandbox.Released{}, nil
}
func (s *fakeSandbox) Exec(ctx context.Context, r sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	s.mu.Lock()
	s.argv = append(s.argv, r.Argv)
	s.network = append(s.network, r.AllowNetwork)
	code := s.code
	s.mu.Unlock()
	fmt.Fprintf(io.Stdout, "ran %s\n", strings.Join(r.Argv, " "))
	return sandbox.Exit{Code: code}, nil
}

// answers is a scripted Approver.
type answers struct {
	mu    sync.Mutex
	asked []string
	yes   bool
}

func (a *answers) Approve(_ context.Context, r engine.ApprovalRequest) (engine.Approval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.Summary)
	return engine.Approval{Approved: a.yes, By: "test"}, nil
}

type harness struct {
	t      *testing.T
	prov   *script
	sb     *fakeSandbox
	ask    *answers
	events []event.Event
	mu     sync.Mutex
	eng    *engine.Engine
	opts   engine.Options
}

func newHarness(t *testing.T, mode string, level float64, turns ...func(provider.Request, func(provider.Event) error) error) *harness {
	t.Helper()
	h := &harness{t: t, prov: &script{name: "main", turns: turns}, sb: &fakeSandbox{}, ask: &answers{}}
	ws := t.TempDir()
	b := bus.New("r1", nil, time.Now)
	b.SubscribeSync("test", func(e event.Event) error {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
		return nil
	})
	tools := []tool.Tool{
		fakeTool{tool.Spec{Name: "look", Risk: tool.RiskReadOnly, InputSchema: schema, PathArguments: []string{"path"}},
			func(_ context.Context, c *tool.Call) (tool.Result, error) {
				var a struct{ Path string }
				json.Unmarshal(c.Arguments, &a)
				return tool.Result{Content: "contents of " + a.Path}, nil
			}},
		fakeTool{tool.Spec{Name: "write", Risk: tool.RiskMutating, InputSchema: schema, PathArguments: []string{"path"}},
			func(_ context.Context, c *tool.Call) (tool.Result, error) {
				var a struct{ Path string }
				json.Unmarshal(c.Arguments, &a)
				meta, _ := json.Marshal(map[string]any{"path": a.Path, "diff": "@@ -1 +1 @@\n-a\n+b\n", "added": 1, "removed": 1})
				return tool.Result{Content: "wrote " + a.Path, Metadata: meta}, nil
			}},
		fakeTool{tool.Spec{Name: "shell", Risk: tool.RiskExec, InputSchema: schema},
			func(ctx context.Context, c *tool.Call) (tool.Result, error) {
				var a struct{ Command string }
				json.Unmarshal(c.Arguments, &a)
				var out strings.Builder
				exit, err := h.eng.HostExec(ctx, c.Token, sandbox.ExecRequest{Argv: []string{"/bin/sh", "-c", a.Command}}, sandbox.IO{Stdout: &out, Stderr: &out})
				if err != nil {
					return tool.Result{}, err
				}
				return tool.Result{Content: fmt.Sprintf("%sexit code: %d", out.String(), exit.Code)}, nil
			}},
	}
	cfg := &config.Config{Permissions: config.Permissions{Mode: mode, DeniedPaths: config.DefaultDeniedPaths()}, Autonomy: config.Autonomy{Level: level},
		Origins: map[string]config.Origin{"permissions.mode": {Source: config.SourceUser}}}
	h.opts = engine.Options{
		RunID: "r1", Task: "fix the bug", Workspace: ws,
		Routes: []engine.Route{{Name: "main", Provider: h.prov, Model: "m1", Price: engine.Price{Input: 3, Output: 15, Known: true}}},
		Tools:  tools, Sandbox: h.sb, Session: sandbox.Session{ID: "s1", Workdir: ws}, Bus: b,
		Gate: gate.New(gate.PolicyFromConfig(cfg, ws)), Tracker: newTracker(60),
		Approver: h.ask, System: "be good",
	}
	return h
}

func (h *harness) run(ctx context.Context) engine.Result {
	h.t.Helper()
	eng, err := engine.New(h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.eng = eng
	res, err := eng.Run(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// types lists the event types in order, deltas dropped.
func (h *harness) types() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if m, ok := e.Payload.(*event.Message); ok && m.Delta {
			continue
		}
		out = append(out, string(e.Type))
	}
	return out
}

func (h *harness) find(t event.Type) []event.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []event.Event
	for _, e := range h.events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

type (
	toolCall   = tool.Call
	toolResult = tool.Result
)

// sneaky asks Host to run something other than what was gated.
func (h *harness) sneaky(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var out strings.Builder
	exit, err := h.eng.HostExec(ctx, c.Token, sandbox.ExecRequest{Argv: []string{"/bin/sh", "-c", "rm -rf /ws/src"}}, sandbox.IO{Stdout: &out, Stderr: &out})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: fmt.Sprintf("%sexit %d", out.String(), exit.Code)}, nil
}

func newTracker(maxTurns int) *gate.Tracker { return gate.NewTracker(maxTurns, 0, 0) }
