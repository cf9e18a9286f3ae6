package openai

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// TestOverPluginProtocol drives the openai component through the real
// go-plugin gRPC protocol, as the kernel does.
func TestOverPluginProtocol(t *testing.T) {
	f := newFake(t,
		sseChunks(
			chunk(`{"role":"assistant","content":"Reading."}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"),
			usageChunk,
		),
		jsonError(429, "requests", "rate_limit_exceeded", "Rate limit reached", map[string]string{"Retry-After": "3"}),
	)
	p, _ := testProvider(t, OpenAI, f, map[string]any{"max_retries": 0})
	comps := Components()
	comps[0] = p // the configured openai component
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{
		"provider": &provider.Plugin{Providers: comps},
	})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("provider")
	if err != nil {
		t.Fatal(err)
	}
	remote := raw.(*provider.Client).Provider(OpenAI)

	var got []provider.Event
	err = remote.Chat(context.Background(), provider.Request{Model: "gpt-4.1",
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "read a.go"}}}}},
		func(e provider.Event) error { got = append(got, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Text: "Reading."},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "call_A", Name: "read_file", ArgumentsDelta: `{"path":`}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `"a.go"}`}},
		{Usage: &provider.Usage{InputTokens: 20, OutputTokens: 17, CacheReadTokens: 100}},
		{Stop: provider.StopToolUse},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}

	err = remote.Chat(context.Background(), provider.Request{Model: "gpt-4.1"}, func(provider.Event) error { return nil })
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrRateLimited || perr.HTTPStatus != 429 || perr.RetryAfter.Seconds() != 3 {
		t.Errorf("error over gRPC = %#v", err)
	}
}
