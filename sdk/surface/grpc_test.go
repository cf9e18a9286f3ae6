package surface_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk/surface"
)

// console records what it is delivered and sends a fixed list of commands.
type console struct {
	mu   sync.Mutex
	got  []surface.Event
	cmds []surface.Command
}

func (*console) Name() string { return "console" }
func (c *console) Deliver(_ context.Context, ev surface.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ev)
	return nil
}
func (c *console) Commands(_ context.Context, send func(surface.Command) error) error {
	for _, cmd := range c.cmds {
		if err := send(cmd); err != nil {
			return err
		}
	}
	return nil
}

func connect(t *testing.T, c *console) *surface.Client {
	t.Helper()
	client, server := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{
		"surface": &surface.Plugin{Surfaces: []surface.Surface{c}},
	})
	_ = server // client.Close shuts the server down through go-plugin's controller
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("surface")
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*surface.Client)
}

func TestDeliverAndCommands(t *testing.T) {
	c := &console{cmds: []surface.Command{
		{Principal: "ada", StartRun: &surface.StartRun{Task: "fix the tests", Workspace: "/w", Model: "m"}},
		{Principal: "ada", Approve: &surface.Approve{ApprovalID: "ap-1", Scope: "run"}},
		{Principal: "bob", Deny: &surface.Deny{ApprovalID: "ap-2", Reason: "not on main"}},
		{Principal: "bob", Cancel: &surface.Cancel{RunID: "r1"}},
		{Principal: "ada", SetAutonomy: &surface.SetAutonomy{RunID: "r1", Level: 0.7}},
	}}
	remote := connect(t, c).Surface("console")
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	var sent []surface.Event
	for i := range 3 {
		ev := surface.Event{SchemaVersion: 1, RunID: "r1", AgentID: "main", Seq: uint64(i + 1), Time: now,
			Type: "Message", JSON: json.RawMessage(`{"text":"hi"}`)}
		sent = append(sent, ev)
		if err := remote.Deliver(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	n, err := remote.Close()
	if err != nil || n != 3 {
		t.Fatalf("close = %d, %v", n, err)
	}
	if d := cmp.Diff(sent, c.got); d != "" {
		t.Errorf("delivered (-sent +got):\n%s", d)
	}
	var got []surface.Command
	if err := remote.Commands(context.Background(), func(cmd surface.Command) error { got = append(got, cmd); return nil }); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c.cmds, got); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
}

func TestMalformedCommandsAreRejected(t *testing.T) {
	c := &console{cmds: []surface.Command{{Principal: "eve", SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: 7}}}}
	err := connect(t, c).Surface("console").Commands(context.Background(), func(surface.Command) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "surface console sent a malformed command: autonomy level outside 0.0-1.0") {
		t.Fatalf("err = %v", err)
	}
	c = &console{cmds: []surface.Command{{Principal: "eve"}}}
	err = connect(t, c).Surface("console").Commands(context.Background(), func(surface.Command) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "empty command") {
		t.Fatalf("empty command: %v", err)
	}
}

func TestUnknownComponent(t *testing.T) {
	remote := connect(t, &console{}).Surface("slack")
	_ = remote.Deliver(context.Background(), surface.Event{Time: time.Now()})
	if _, err := remote.Close(); err == nil || !strings.Contains(err.Error(), `no surface "slack"`) {
		t.Fatalf("err = %v", err)
	}
}
