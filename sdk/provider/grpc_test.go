package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// mirror records the request and replays a scripted stream, then returns
// err.
type mirror struct {
	models []provider.Model
	events []provider.Event
	err    error

	mu  sync.Mutex
	got []provider.Request
}

func (*mirror) Name() string { return "mirror" }
func (m *mirror) Models(context.Context) ([]provider.Model, error) {
	return m.models, m.err
}
func (m *mirror) Chat(_ context.Context, r provider.Request, send func(provider.Event) error) error {
	m.mu.Lock()
	m.got = append(m.got, r)
	m.mu.Unlock()
	for _, e := range m.events {
		if err := send(e); err != nil {
			return err
		}
	}
	return m.err
}

func (m *mirror) requests() []provider.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]provider.Request(nil), m.got...)
}

// serve runs p in-process over real gRPC and returns the kernel's client
// and the raw connection. One value plays both sides, as go-plugin's test
// helper expects.
func serve(t *testing.T, p goplugin.Plugin) (*provider.Client, *grpc.ClientConn) {
	t.Helper()
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{"provider": p})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("provider")
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*provider.Client), client.Conn
}

func connect(t *testing.T, m *mirror) provider.Provider {
	t.Helper()
	c, _ := serve(t, &provider.Plugin{Providers: []provider.Provider{m}})
	return c.Provider("mirror")
}

// collect runs one Chat and returns what the kernel received.
func collect(t *testing.T, p provider.Provider, req provider.Request) ([]provider.Event, error) {
	t.Helper()
	var got []provider.Event
	err := p.Chat(t.Context(), req, func(e provider.Event) error { got = append(got, e); return nil })
	return got, err
}

func TestModelsRoundTrip(t *testing.T) {
	models := []provider.Model{
		{ID: "big-1", DisplayName: "Big One", ContextWindow: 200000, MaxOutputTokens: 64000,
			InputPricePerMTok: 3, OutputPricePerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75,
			SupportsTools: true, SupportsThinking: true},
		{ID: "small-1", ContextWindow: 8192, InputPricePerMTok: 0.05},
	}
	got, err := connect(t, &mirror{models: models}).Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(models, got); d != "" {
		t.Errorf("models (-served +received):\n%s", d)
	}
}

func TestRequestConversion(t *testing.T) {
	zero, warm := 0.0, 0.7
	user := func(parts ...provider.Part) provider.Message {
		return provider.Message{Role: provider.RoleUser, Parts: parts}
	}
	assistant := func(parts ...provider.Part) provider.Message {
		return provider.Message{Role: provider.RoleAssistant, Parts: parts}
	}
	cases := []struct {
		name string
		req  provider.Request
	}{
		{"empty", provider.Request{}},
		{"scalar fields", provider.Request{Model: "big-1", System: "Be brief.", MaxOutputTokens: 4096, ThinkingBudget: 2048, Temperature: &warm}},
		{"zero temperature is not unset", provider.Request{Temperature: &zero}},
		{"text", provider.Request{Messages: []provider.Message{user(provider.Part{Text: "list the files"})}}},
		{"thinking with signature", provider.Request{Messages: []provider.Message{
			assistant(provider.Part{Thinking: &provider.Thinking{Text: "ls will do", Signature: "EqQBCkgIAxABGAIiQ=="}}),
		}}},
		{"redacted thinking: signature only", provider.Request{Messages: []provider.Message{
			assistant(provider.Part{Thinking: &provider.Thinking{Signature: "opaque"}}),
		}}},
		{"tool call", provider.Request{Messages: []provider.Message{
			assistant(provider.Part{ToolCall: &provider.ToolCall{ID: "toolu_1", Name: "shell", ArgumentsJSON: `{"argv":["ls","-la"]}`}}),
		}}},
		{"tool result", provider.Request{Messages: []provider.Message{
			user(provider.Part{ToolResult: &provider.ToolResult{CallID: "toolu_1", Content: "a.go\nb.go"}}),
		}}},
		{"failed tool result", provider.Request{Messages: []provider.Message{
			user(provider.Part{ToolResult: &provider.ToolResult{CallID: "toolu_2", Content: "permission denied", IsError: true}}),
		}}},
		{"a whole turn, order kept", provider.Request{
			Model: "big-1",
			Messages: []provider.Message{
				user(provider.Part{Text: "fix the build"}),
				assistant(
					provider.Part{Thinking: &provider.Thinking{Text: "run it first", Signature: "sig"}},
					provider.Part{Text: "Running the build."},
					provider.Part{ToolCall: &provider.ToolCall{ID: "c1", Name: "shell", ArgumentsJSON: `{"argv":["make"]}`}},
					provider.Part{ToolCall: &provider.ToolCall{ID: "c2", Name: "read", ArgumentsJSON: `{"path":"Makefile"}`}},
				),
				user(
					provider.Part{ToolResult: &provider.ToolResult{CallID: "c1", Content: "exit 2", IsError: true}},
					provider.Part{ToolResult: &provider.ToolResult{CallID: "c2", Content: "all: build"}},
					provider.Part{Text: "and be quick"},
				),
			},
			Tools: []provider.ToolSpec{
				{Name: "shell", Description: "Runs a command.", InputSchemaJSON: `{"type":"object"}`},
				{Name: "read", Description: "Reads a file.", InputSchemaJSON: `{"type":"object","properties":{"path":{"type":"string"}}}`},
			},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &mirror{}
			if _, err := collect(t, connect(t, m), tc.req); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]provider.Request{tc.req}, m.requests(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("request (-sent +received):\n%s", d)
			}
		})
	}
}

func TestEventsRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		events []provider.Event
	}{
		{"text", []provider.Event{{Text: "Hello"}, {Text: ", world"}}},
		{"thinking with signature", []provider.Event{
			{Thinking: &provider.Thinking{Text: "Let me look"}},
			{Thinking: &provider.Thinking{Signature: "EqQBCkgIAxAB"}},
		}},
		{"interleaved tool-call deltas", []provider.Event{
			{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "c0", Name: "read", ArgumentsDelta: `{"pa`}},
			{ToolCall: &provider.ToolCallDelta{Index: 1, ID: "c1", Name: "shell"}},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `th":"a.go"}`}},
			{ToolCall: &provider.ToolCallDelta{Index: 1, ArgumentsDelta: `{"argv":["ls"]}`}},
		}},
		{"usage", []provider.Event{{Usage: &provider.Usage{InputTokens: 1200, OutputTokens: 345, CacheReadTokens: 1000, CacheWriteTokens: 200}}}},
		{"stop end_turn", []provider.Event{{Stop: provider.StopEndTurn}}},
		{"stop tool_use", []provider.Event{{Stop: provider.StopToolUse}}},
		{"stop max_tokens", []provider.Event{{Stop: provider.StopMaxTokens}}},
		{"stop refusal", []provider.Event{{Stop: provider.StopRefusal}}},
		{"a whole turn: deltas, then usage, then stop", []provider.Event{
			{Thinking: &provider.Thinking{Text: "hm", Signature: "s"}},
			{Text: "Reading it."},
			{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "c2", Name: "read", ArgumentsDelta: `{"path":"a"}`}},
			{Usage: &provider.Usage{InputTokens: 10, OutputTokens: 3}},
			{Stop: provider.StopToolUse},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(t, connect(t, &mirror{events: tc.events}), provider.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.events, got); d != "" {
				t.Errorf("events (-sent +received):\n%s", d)
			}
		})
	}
}

func TestTypedErrorsRoundTrip(t *testing.T) {
	classes := []provider.ErrorClass{provider.ErrRateLimited, provider.ErrOverloaded, provider.ErrServer, provider.ErrTimeout,
		provider.ErrAuth, provider.ErrBadRequest, provider.ErrContextTooLong, provider.ErrRefusal}
	type variant struct {
		name string
		err  provider.Error
		wrap bool
	}
	for _, class := range classes {
		for _, v := range []variant{
			{"with retry-after and status", provider.Error{Class: class, Message: "slow down", RetryAfter: 2500 * time.Millisecond, HTTPStatus: 429}, false},
			{"no hints", provider.Error{Class: class, Message: "no HTTP here"}, false},
			{"wrapped", provider.Error{Class: class, Message: "deep", HTTPStatus: 503}, true},
		} {
			t.Run(string(class)+"/"+v.name, func(t *testing.T) {
				want := v.err
				var sent error = &want
				if v.wrap {
					sent = fmt.Errorf("call vendor: %w", sent)
				}
				got, err := collect(t, connect(t, &mirror{events: []provider.Event{{Text: "partial"}}, err: sent}), provider.Request{})
				if d := cmp.Diff([]provider.Event{{Text: "partial"}}, got); d != "" {
					t.Errorf("events before the error (-want +got):\n%s", d)
				}
				var perr *provider.Error
				if !errors.As(err, &perr) {
					t.Fatalf("err = %#v, want a *provider.Error", err)
				}
				if d := cmp.Diff(want, *perr); d != "" {
					t.Errorf("error (-sent +received):\n%s", d)
				}
				if perr.Class.Retryable() != class.Retryable() {
					t.Errorf("retryable changed on the wire")
				}
			})
		}
	}
}

func TestErrorClassEdges(t *testing.T) {
	// A class the SDK does not know goes over the wire unspecified and
	// arrives as a server error.
	_, err := collect(t, connect(t, &mirror{err: &provider.Error{Class: "made_up", Message: "m"}}), provider.Request{})
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrServer || perr.Message != "m" {
		t.Errorf("unknown class arrived as %#v", err)
	}
	// Sub-millisecond retry hints are truncated to the wire's milliseconds.
	_, err = collect(t, connect(t, &mirror{err: &provider.Error{Class: provider.ErrRateLimited, RetryAfter: 1500 * time.Microsecond}}), provider.Request{})
	if !errors.As(err, &perr) || perr.RetryAfter != time.Millisecond {
		t.Errorf("retry-after arrived as %#v", err)
	}
}

func TestUntypedErrorsAreGRPCErrors(t *testing.T) {
	_, err := collect(t, connect(t, &mirror{events: []provider.Event{{Text: "a"}}, err: errors.New("socket closed")}), provider.Request{})
	var perr *provider.Error
	if errors.As(err, &perr) {
		t.Fatalf("an untyped failure became %#v", perr)
	}
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "socket closed") {
		t.Fatalf("err = %v", err)
	}
	if _, err := connect(t, &mirror{err: errors.New("no catalogue")}).Models(t.Context()); err == nil || !strings.Contains(err.Error(), "no catalogue") {
		t.Fatalf("models err = %v", err)
	}
}

func TestPluginSideRefusals(t *testing.T) {
	c, conn := serve(t, &provider.Plugin{Providers: []provider.Provider{&mirror{}}})
	cases := []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"models of an unknown provider", func() error {
			_, err := c.Provider("ghost").Models(t.Context())
			return err
		}, codes.NotFound, `no provider "ghost" in this plugin`},
		{"chat with an unknown provider", func() error {
			_, err := collect(t, c.Provider("ghost"), provider.Request{})
			return err
		}, codes.NotFound, `no provider "ghost" in this plugin`},
		{"unknown role", func() error {
			_, err := collect(t, c.Provider("mirror"), provider.Request{Messages: []provider.Message{{Role: "system", Parts: []provider.Part{{Text: "x"}}}}})
			return err
		}, codes.InvalidArgument, "messages[0]: unknown role ROLE_UNSPECIFIED"},
		{"empty content part", func() error {
			stream, err := pb.NewProviderClient(conn).Chat(t.Context(), &pb.ChatRequest{Component: "mirror", Messages: []*pb.ChatMessage{
				{Role: pb.Role_ROLE_USER, Parts: []*pb.ContentPart{{Part: &pb.ContentPart_Text{Text: "ok"}}}},
				{Role: pb.Role_ROLE_USER, Parts: []*pb.ContentPart{{}}},
			}})
			if err != nil {
				return err
			}
			_, err = stream.Recv()
			return err
		}, codes.InvalidArgument, "messages[1]: empty content part"},
		{"unknown stop reason from the provider", func() error {
			_, err := collect(t, connect(t, &mirror{events: []provider.Event{{Stop: "bored"}}}), provider.Request{})
			return err
		}, codes.Unknown, `unknown stop reason "bored"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (%v), want %v %q", err, status.Code(err), tc.code, tc.want)
			}
		})
	}
}

// rawProvider serves a hand-written Provider service, to play a plugin
// that breaks the protocol; the kernel side is the SDK's.
type rawProvider struct {
	goplugin.NetRPCUnsupportedPlugin
	events []*pb.ChatEvent
}

func (r *rawProvider) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterProviderServer(s, &rawServer{events: r.events})
	return nil
}

func (r *rawProvider) GRPCClient(ctx context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return (&provider.Plugin{}).GRPCClient(ctx, b, c)
}

type rawServer struct {
	pb.UnimplementedProviderServer
	events []*pb.ChatEvent
}

func (r *rawServer) Chat(_ *pb.ChatRequest, stream pb.Provider_ChatServer) error {
	for _, ev := range r.events {
		if err := stream.Send(ev); err != nil {
			return err
		}
	}
	return nil
}

func TestKernelRefusesMalformedEvents(t *testing.T) {
	text := &pb.ChatEvent{Event: &pb.ChatEvent_TextDelta{TextDelta: "ok"}}
	cases := []struct {
		name string
		ev   *pb.ChatEvent
		want string
	}{
		{"empty event", &pb.ChatEvent{}, "provider raw sent a malformed event: empty chat event"},
		{"negative tool-call index", &pb.ChatEvent{Event: &pb.ChatEvent_ToolCallDelta{ToolCallDelta: &pb.ToolCallDelta{Index: -1}}},
			"provider raw sent a malformed event: tool call delta with negative index -1"},
		{"stop reason unspecified", &pb.ChatEvent{Event: &pb.ChatEvent_Stop{Stop: &pb.Stop{}}}, "provider raw sent a malformed event: unknown stop reason STOP_REASON_UNSPECIFIED"},
		{"stop reason from the future", &pb.ChatEvent{Event: &pb.ChatEvent_Stop{Stop: &pb.Stop{Reason: 99}}}, "provider raw sent a malformed event: unknown stop reason 99"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := serve(t, &rawProvider{events: []*pb.ChatEvent{text, tc.ev}})
			got, err := collect(t, c.Provider("raw"), provider.Request{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if d := cmp.Diff([]provider.Event{{Text: "ok"}}, got); d != "" {
				t.Errorf("events before the bad one (-want +got):\n%s", d)
			}
		})
	}
	// A stream that simply ends is a finished turn, whatever it lacked.
	c, _ := serve(t, &rawProvider{events: []*pb.ChatEvent{text}})
	if _, err := collect(t, c.Provider("raw"), provider.Request{}); err != nil {
		t.Fatalf("plain end: %v", err)
	}
}

func TestKernelSendErrorEndsChat(t *testing.T) {
	stop := errors.New("the user pressed Ctrl-C")
	m := &mirror{events: []provider.Event{{Text: "a"}, {Text: "b"}, {Text: "c"}}}
	var n int
	err := connect(t, m).Chat(t.Context(), provider.Request{}, func(provider.Event) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("err = %v after %d events", err, n)
	}
}

func TestRetryable(t *testing.T) {
	cases := []struct {
		class provider.ErrorClass
		retry bool
	}{
		{provider.ErrRateLimited, true},
		{provider.ErrOverloaded, true},
		{provider.ErrServer, true},
		{provider.ErrTimeout, true},
		{provider.ErrAuth, false},
		{provider.ErrBadRequest, false},
		{provider.ErrContextTooLong, false},
		{provider.ErrRefusal, false},
		{"", false},
		{"made_up", false},
	}
	for _, tc := range cases {
		if got := tc.class.Retryable(); got != tc.retry {
			t.Errorf("%q.Retryable() = %v, want %v", tc.class, got, tc.retry)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	cases := []struct {
		err  provider.Error
		want string
	}{
		{provider.Error{Class: provider.ErrRateLimited, Message: "slow down", HTTPStatus: 429}, "rate_limited (HTTP 429): slow down"},
		{provider.Error{Class: provider.ErrTimeout, Message: "no answer in 60s"}, "timeout: no answer in 60s"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// endless streams until its context ends, and says when it stopped.
type endless struct{ stopped chan struct{} }

func (endless) Name() string                                     { return "endless" }
func (endless) Models(context.Context) ([]provider.Model, error) { return nil, nil }
func (e endless) Chat(ctx context.Context, _ provider.Request, send func(provider.Event) error) error {
	defer close(e.stopped)
	for {
		if err := send(provider.Event{Text: "more "}); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// TestAbandonedChatStopsThePlugin: when the kernel stops reading a turn
// (its send callback failed), the plugin's Chat must see its context end,
// or it keeps streaming (and billing) until the kernel's own context ends.
func TestAbandonedChatStopsThePlugin(t *testing.T) {
	e := endless{stopped: make(chan struct{})}
	c, _ := serve(t, &provider.Plugin{Providers: []provider.Provider{e}})
	err := c.Provider("endless").Chat(context.Background(), provider.Request{}, func(provider.Event) error { return io.ErrClosedPipe })
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-e.stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("the plugin is still streaming a turn nobody reads")
	}
}
