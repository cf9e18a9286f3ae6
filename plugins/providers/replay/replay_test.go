package replay

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	conversation "github.com/sparrow-cli/sparrow/sdk/replay"
)

func configured(t *testing.T, conv string) *Replay {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conv.json")
	if err := os.WriteFile(path, []byte(conv), 0o644); err != nil {
		t.Fatal(err)
	}
	r := New()
	cfg, _ := json.Marshal(map[string]any{"file": path, "delay": "0s"})
	if err := r.Configure(context.Background(), plugin.Config{Values: cfg}); err != nil {
		t.Fatal(err)
	}
	return r
}

func user(text string) provider.Request {
	return provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: text}}}}}
}

func TestServesTurnsInOrder(t *testing.T) {
	r := configured(t, `{"turns":[
	  {"expect":"fix","events":[{"text":"on it"},{"tool_call":{"id":"c1","name":"read_file","arguments":{"path":"a.go"}}},{"usage":{"input":5,"output":2}},{"stop":"tool_use"}]},
	  {"events":[{"text":"done"},{"stop":"end_turn"}]}]}`)
	var text, args strings.Builder
	var stop provider.StopReason
	collect := func(e provider.Event) error {
		switch {
		case e.ToolCall != nil:
			args.WriteString(e.ToolCall.ArgumentsDelta)
		case e.Stop != "":
			stop = e.Stop
		case e.Usage == nil:
			text.WriteString(e.Text)
		}
		return nil
	}
	if err := r.Chat(context.Background(), user("please fix it"), collect); err != nil {
		t.Fatal(err)
	}
	if text.String() != "on it" || args.String() != `{"path":"a.go"}` || stop != provider.StopToolUse {
		t.Fatalf("turn 1: %q %q %q", text.String(), args.String(), stop)
	}
	text.Reset()
	if err := r.Chat(context.Background(), user("anything"), collect); err != nil || text.String() != "done" {
		t.Fatalf("turn 2: %q %v", text.String(), err)
	}
	err := r.Chat(context.Background(), user("more"), collect)
	var perr *provider.Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Message, "all were served") {
		t.Fatalf("past the end: %v", err)
	}
}

func TestDriftAndReplayedErrors(t *testing.T) {
	r := configured(t, `{"turns":[{"expect":"fix","events":[{"text":"x"}]}]}`)
	err := r.Chat(context.Background(), user("something else"), func(provider.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "drifted from its recording") {
		t.Fatalf("drift: %v", err)
	}
	r = configured(t, `{"turns":[{"error":{"class":"rate_limited","message":"slow","retry_after_ms":250,"http_status":429}}]}`)
	err = r.Chat(context.Background(), user("x"), func(provider.Event) error { return nil })
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrRateLimited || perr.RetryAfter.Milliseconds() != 250 {
		t.Fatalf("replayed error: %#v", err)
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	for name, src := range map[string]string{
		"empty":         `{"turns":[]}`,
		"unknown field": `{"turns":[{"events":[{"txt":"x"}]}]}`,
		"both":          `{"turns":[{"events":[{"text":"x"}],"error":{"class":"server"}}]}`,
		"not json":      `{`,
	} {
		path := filepath.Join(t.TempDir(), "c.json")
		os.WriteFile(path, []byte(src), 0o644)
		if _, err := conversation.Load(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := conversation.Load("../../../examples/demo/conversation.json"); err != nil {
		t.Errorf("the demo conversation does not load: %v", err)
	}
}
