package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
	"github.com/sparrow-cli/sparrow/sdk/surface"
)

// console records what it is delivered and sends a fixed list of commands.
// It refuses events of type "Poison".
type console struct {
	cmds []surface.Command

	mu  sync.Mutex
	got []surface.Event
}

func (*console) Name() string { return "console" }

func (c *console) Deliver(_ context.Context, ev surface.Event) error {
	if ev.Type == "Poison" {
		return errors.New("cannot render Poison")
	}
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

func (c *console) delivered() []surface.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]surface.Event(nil), c.got...)
}

// serve runs surfaces in-process over real gRPC and returns the kernel's
// client and the raw connection. One value plays both sides, as
// go-plugin's test helper expects.
func serve(t *testing.T, c *console) (*surface.Client, *grpc.ClientConn) {
	t.Helper()
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{
		"surface": &surface.Plugin{Surfaces: []surface.Surface{c}},
	})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("surface")
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*surface.Client), client.Conn
}

func connect(t *testing.T, c *console) *surface.Remote {
	t.Helper()
	client, _ := serve(t, c)
	return client.Surface("console")
}

var start = time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)

func events(n int) []surface.Event {
	var out []surface.Event
	for i := range n {
		out = append(out, surface.Event{SchemaVersion: 1, RunID: "r1", AgentID: "main", Seq: uint64(i + 1),
			Time: start.Add(time.Duration(i) * time.Millisecond), Type: "Message",
			JSON: json.RawMessage(fmt.Sprintf(`{"type":"Message","seq":%d,"text":"hi"}`, i+1))})
	}
	return out
}

// collect returns every command the surface sends.
func collect(t *testing.T, r *surface.Remote) ([]surface.Command, error) {
	t.Helper()
	var got []surface.Command
	err := r.Commands(t.Context(), func(c surface.Command) error { got = append(got, c); return nil })
	return got, err
}

func TestDeliverThenCloseCounts(t *testing.T) {
	for _, n := range []int{0, 1, 3, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := &console{}
			remote := connect(t, c)
			sent := events(n)
			for _, ev := range sent {
				if err := remote.Deliver(t.Context(), ev); err != nil {
					t.Fatal(err)
				}
			}
			got, err := remote.Close()
			if err != nil || got != uint64(n) {
				t.Fatalf("Close = %d, %v; want %d", got, err, n)
			}
			if d := cmp.Diff(sent, c.delivered()); d != "" {
				t.Errorf("delivered (-sent +got):\n%s", d)
			}
		})
	}
}

func TestDeliverReopensAfterClose(t *testing.T) {
	c := &console{}
	remote := connect(t, c)
	evs := events(3)
	for _, batch := range [][]surface.Event{evs[:2], evs[2:]} {
		for _, ev := range batch {
			if err := remote.Deliver(t.Context(), ev); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := remote.Close(); err != nil || n != uint64(len(batch)) {
			t.Fatalf("Close = %d, %v; want %d", n, err, len(batch))
		}
	}
	if d := cmp.Diff(evs, c.delivered()); d != "" {
		t.Errorf("delivered (-sent +got):\n%s", d)
	}
}

func TestDeliveredTimeIsTheSameInstant(t *testing.T) {
	c := &console{}
	remote := connect(t, c)
	ev := events(1)[0]
	ev.Time = time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("CET", 3600))
	if err := remote.Deliver(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Close(); err != nil {
		t.Fatal(err)
	}
	if got := c.delivered()[0].Time; !got.Equal(ev.Time) || got.Location() != time.UTC {
		t.Errorf("time arrived as %v, want %v in UTC", got, ev.Time)
	}
}

func TestSurfaceRefusingAnEventEndsTheStream(t *testing.T) {
	c := &console{}
	remote := connect(t, c)
	evs := events(2)
	evs[1].Type = "Poison"
	for _, ev := range evs {
		_ = remote.Deliver(t.Context(), ev) // the refusal surfaces at Close
	}
	if _, err := remote.Close(); err == nil || !strings.Contains(err.Error(), "cannot render Poison") {
		t.Fatalf("Close = %v", err)
	}
	if got := len(c.delivered()); got != 1 {
		t.Errorf("%d events delivered, want the one before the refusal", got)
	}
}

func TestCommandsRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		cmds []surface.Command
	}{
		{"none", nil},
		{"start run", []surface.Command{{Principal: "telegram:42", StartRun: &surface.StartRun{Task: "fix the tests", Workspace: "/w", Model: "big-1"}}}},
		{"approve once", []surface.Command{{Principal: "ada", Approve: &surface.Approve{ApprovalID: "ap-1", Scope: "once"}}}},
		{"approve for the run", []surface.Command{{Principal: "ada", Approve: &surface.Approve{ApprovalID: "ap-1", Scope: "run"}}}},
		{"deny", []surface.Command{{Principal: "bob", Deny: &surface.Deny{ApprovalID: "ap-2", Reason: "not on main"}}}},
		{"cancel", []surface.Command{{Principal: "bob", Cancel: &surface.Cancel{RunID: "r1"}}}},
		{"set autonomy", []surface.Command{{Principal: "ada", SetAutonomy: &surface.SetAutonomy{RunID: "r1", Level: 0.7}}}},
		{"autonomy at the bottom", []surface.Command{{SetAutonomy: &surface.SetAutonomy{RunID: "r1", Level: 0}}}},
		{"autonomy at the top", []surface.Command{{SetAutonomy: &surface.SetAutonomy{RunID: "r1", Level: 1}}}},
		{"all of them, in order", []surface.Command{
			{Principal: "ada", StartRun: &surface.StartRun{Task: "t"}},
			{Principal: "ada", Approve: &surface.Approve{ApprovalID: "a", Scope: "once"}},
			{Principal: "bob", Deny: &surface.Deny{ApprovalID: "b"}},
			{Principal: "ada", SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: 0.33}},
			{Principal: "bob", Cancel: &surface.Cancel{RunID: "r"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(t, connect(t, &console{cmds: tc.cmds}))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.cmds, got); d != "" {
				t.Errorf("commands (-sent +received):\n%s", d)
			}
		})
	}
}

func TestMalformedCommandsAreRejected(t *testing.T) {
	ok := surface.Command{Principal: "ada", Cancel: &surface.Cancel{RunID: "r0"}}
	cases := []struct {
		name string
		cmd  surface.Command
		want string
	}{
		{"autonomy below zero", surface.Command{Principal: "eve", SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: -0.01}}, "autonomy level outside 0.0-1.0"},
		{"autonomy above one", surface.Command{Principal: "eve", SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: 1.01}}, "autonomy level outside 0.0-1.0"},
		{"autonomy way off", surface.Command{Principal: "eve", SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: 7}}, "autonomy level outside 0.0-1.0"},
		{"autonomy infinite", surface.Command{Principal: "eve", SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: math.Inf(1)}}, "autonomy level outside 0.0-1.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(t, connect(t, &console{cmds: []surface.Command{ok, tc.cmd, ok}}))
			if err == nil || err.Error() != "surface console sent a malformed command: "+tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if d := cmp.Diff([]surface.Command{ok}, got); d != "" {
				t.Errorf("commands before the bad one (-want +got):\n%s", d)
			}
		})
	}
	// A command with nothing set cannot even be sent.
	_, err := collect(t, connect(t, &console{cmds: []surface.Command{{Principal: "eve"}}}))
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "empty command") {
		t.Fatalf("empty command: %v", err)
	}
}

// TestNaNAutonomyIsRejected: NaN compares false with everything, so it
// slips through a "< 0 || > 1" range check.
func TestNaNAutonomyIsRejected(t *testing.T) {
	_, err := collect(t, connect(t, &console{cmds: []surface.Command{{SetAutonomy: &surface.SetAutonomy{RunID: "r", Level: math.NaN()}}}}))
	if err == nil || !strings.Contains(err.Error(), "autonomy level outside 0.0-1.0") {
		t.Fatalf("err = %v", err)
	}
}

func TestKernelSendErrorEndsCommands(t *testing.T) {
	stop := errors.New("run queue full")
	c := &console{cmds: []surface.Command{
		{StartRun: &surface.StartRun{Task: "a"}}, {StartRun: &surface.StartRun{Task: "b"}},
	}}
	var n int
	err := connect(t, c).Commands(t.Context(), func(surface.Command) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err = %v after %d commands", err, n)
	}
}

func TestUnknownComponentIsNotFound(t *testing.T) {
	client, _ := serve(t, &console{})
	slack := client.Surface("slack")
	if err := slack.Deliver(t.Context(), events(1)[0]); err != nil {
		t.Fatalf("the first send cannot know yet: %v", err)
	}
	if _, err := slack.Close(); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `no surface "slack" in this plugin`) {
		t.Fatalf("Close = %v", err)
	}
	if _, err := collect(t, slack); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `no surface "slack" in this plugin`) {
		t.Fatalf("Commands = %v", err)
	}
}

// TestDeliverAfterAFailureSaysWhy: once the plugin has ended the stream,
// a later Deliver must report the plugin's reason, not a bare EOF.
func TestDeliverAfterAFailureSaysWhy(t *testing.T) {
	client, _ := serve(t, &console{})
	slack := client.Surface("slack")
	_ = slack.Deliver(t.Context(), events(1)[0])
	var err error
	for range 50 { // the failure reaches the client asynchronously
		if err = slack.Deliver(t.Context(), events(1)[0]); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if errors.Is(err, io.EOF) || !strings.Contains(fmt.Sprint(err), `no surface "slack"`) {
		t.Fatalf("Deliver = %v", err)
	}
}

func TestPluginRefusesMalformedEvents(t *testing.T) {
	_, conn := serve(t, &console{})
	cases := []struct {
		name string
		req  *pb.DeliverRequest
		want string
	}{
		{"no event", &pb.DeliverRequest{Component: "console"}, "deliver request without an event"},
		{"bad time", &pb.DeliverRequest{Component: "console", Event: &pb.Event{Seq: 9, Time: "yesterday"}}, "event 9: time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := pb.NewSurfaceClient(conn).Deliver(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			_ = stream.Send(tc.req)
			_, err = stream.CloseAndRecv()
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want InvalidArgument %q", err, tc.want)
			}
		})
	}
}
