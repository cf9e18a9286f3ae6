package anthropic

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// TestOverPluginProtocol drives the component through the real go-plugin
// gRPC protocol, as the kernel does: a streamed turn with thinking and a
// tool call, the model list, and a typed error.
func TestOverPluginProtocol(t *testing.T) {
	h := newHarness(t, map[string]any{"max_retries": 0},
		events(evStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Look."}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
			blockStop(0),
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}`,
			jsonDelta(1, `{"path":`), jsonDelta(1, `"a.go"}`), blockStop(1),
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}`, evStop),
		apiErr(529, "overloaded_error", "Overloaded", "retry-after", "4"),
		apiErr(500, "api_error", "models unavailable"))
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{
		"provider": &provider.Plugin{Providers: []provider.Provider{h.Anthropic}},
	})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("provider")
	if err != nil {
		t.Fatal(err)
	}
	remote := raw.(*provider.Client).Provider("anthropic")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var got []provider.Event
	err = remote.Chat(ctx, hello(), func(e provider.Event) error { got = append(got, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Thinking: &provider.Thinking{Text: "Look."}},
		{Thinking: &provider.Thinking{Signature: "sig"}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "toolu_1", Name: "read_file"}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `{"path":`}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `"a.go"}`}},
		usageEv(25, 40, 0, 0),
		{Stop: provider.StopToolUse},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}

	err = remote.Chat(ctx, hello(), func(provider.Event) error { return nil })
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrOverloaded || perr.HTTPStatus != 529 || perr.RetryAfter != 4*time.Second {
		t.Errorf("error over gRPC = %#v", err)
	}

	models, err := remote.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := byID(models, "claude-opus-4"); !ok || m.OutputPricePerMTok != 75 || m.CacheWritePerMTok != 18.75 {
		t.Errorf("models over gRPC: %+v", models)
	}
}
