package provider_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// mirror records the request and replays a scripted stream.
type mirror struct {
	got    provider.Request
	events []provider.Event
	err    error
}

func (*mirror) Name() string                                     { return "mirror" }
func (*mirror) Models(context.Context) ([]provider.Model, error) { return nil, nil }
func (m *mirror) Chat(_ context.Context, r provider.Request, send func(provider.Event) error) error {
	m.got = r
	for _, e := range m.events {
		if err := send(e); err != nil {
			return err
		}
	}
	return m.err
}

func connect(t *testing.T, m *mirror) provider.Provider {
	t.Helper()
	client, server := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{
		"provider": &provider.Plugin{Providers: []provider.Provider{m}},
	})
	_ = server // client.Close shuts the server down through go-plugin's controller
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("provider")
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*provider.Client).Provider("mirror")
}

func TestEveryPartAndEventRoundTrips(t *testing.T) {
	temp := 0.2
	req := provider.Request{
		Model: "m-1", System: "be brief", MaxOutputTokens: 1024, Temperature: &temp, ThinkingBudget: 2048,
		Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Text: "list files"}}},
			{Role: provider.RoleAssistant, Parts: []provider.Part{
				{Thinking: &provider.Thinking{Text: "ls it", Signature: "sig=="}},
				{ToolCall: &provider.ToolCall{ID: "c1", Name: "shell", ArgumentsJSON: `{"argv":["ls"]}`}},
			}},
			{Role: provider.RoleUser, Parts: []provider.Part{{ToolResult: &provider.ToolResult{CallID: "c1", Content: "a.go", IsError: true}}}},
		},
		Tools: []provider.ToolSpec{{Name: "shell", Description: "runs", InputSchemaJSON: `{"type":"object"}`}},
	}
	events := []provider.Event{
		{Thinking: &provider.Thinking{Text: "hm", Signature: "s"}},
		{Text: "Here"},
		{ToolCall: &provider.ToolCallDelta{Index: 1, ID: "c2", Name: "read", ArgumentsDelta: `{"pa`}},
		{ToolCall: &provider.ToolCallDelta{Index: 1, ArgumentsDelta: `th":"a"}`}},
		{Usage: &provider.Usage{InputTokens: 10, OutputTokens: 3, CacheReadTokens: 2, CacheWriteTokens: 1}},
		{Stop: provider.StopToolUse},
	}
	m := &mirror{events: events}
	var got []provider.Event
	if err := connect(t, m).Chat(context.Background(), req, func(e provider.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(req, m.got); d != "" {
		t.Errorf("request (-sent +received):\n%s", d)
	}
	if d := cmp.Diff(events, got); d != "" {
		t.Errorf("events (-sent +received):\n%s", d)
	}
}

func TestTypedErrorsRoundTrip(t *testing.T) {
	for _, class := range []provider.ErrorClass{provider.ErrRateLimited, provider.ErrOverloaded, provider.ErrServer, provider.ErrTimeout,
		provider.ErrAuth, provider.ErrBadRequest, provider.ErrContextTooLong, provider.ErrRefusal} {
		want := &provider.Error{Class: class, Message: "nope", RetryAfter: 2 * time.Second, HTTPStatus: 429}
		m := &mirror{events: []provider.Event{{Text: "partial"}}, err: want}
		var texts int
		err := connect(t, m).Chat(context.Background(), provider.Request{}, func(provider.Event) error { texts++; return nil })
		var got *provider.Error
		if !errors.As(err, &got) || *got != *want || texts != 1 {
			t.Errorf("%s: got %#v after %d events", class, err, texts)
		}
	}
}

func TestRetryable(t *testing.T) {
	want := map[provider.ErrorClass]bool{
		provider.ErrRateLimited: true, provider.ErrOverloaded: true, provider.ErrServer: true, provider.ErrTimeout: true,
		provider.ErrAuth: false, provider.ErrBadRequest: false, provider.ErrContextTooLong: false, provider.ErrRefusal: false,
	}
	for class, retry := range want {
		if class.Retryable() != retry {
			t.Errorf("%s.Retryable() = %v", class, !retry)
		}
	}
}
