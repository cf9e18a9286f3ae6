package bus_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/redact"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

var epoch = time.Date(2026, 11, 22, 15, 30, 12, 0, time.UTC)

// fakeClock returns epoch plus one millisecond per call.
func fakeClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return epoch.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

// collector records what a subscriber received.
type collector struct {
	mu     sync.Mutex
	events []event.Event
}

func (c *collector) add(e event.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

func (c *collector) addSync(e event.Event) error { c.add(e); return nil }

func (c *collector) seqs() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]uint64, len(c.events))
	for i, e := range c.events {
		out[i] = e.Seq
	}
	return out
}

func TestPublishStamps(t *testing.T) {
	b := bus.New("r-1", nil, fakeClock())
	var got collector
	b.SubscribeSync("c", got.addSync)
	e1, err := b.Publish("main", &event.Message{Role: "assistant", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := b.Publish("", &event.AgentStatus{AgentID: "a2", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	want := []event.Event{
		{SchemaVersion: event.SchemaVersion, RunID: "r-1", AgentID: "main", Seq: 1, Time: epoch.Add(time.Millisecond),
			Type: event.TypeMessage, Payload: &event.Message{Role: "assistant", Text: "hi"}},
		{SchemaVersion: event.SchemaVersion, RunID: "r-1", AgentID: bus.DefaultAgentID, Seq: 2, Time: epoch.Add(2 * time.Millisecond),
			Type: event.TypeAgentStatus, Payload: &event.AgentStatus{AgentID: "a2", Status: "running"}},
	}
	if diff := cmp.Diff(want, got.events); diff != "" {
		t.Errorf("delivered events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, []event.Event{e1, e2}); diff != "" {
		t.Errorf("returned events (-want +got):\n%s", diff)
	}
}

func TestConcurrentPublishersKeepOrder(t *testing.T) {
	const publishers, each = 8, 500
	b := bus.New("r", nil, nil)
	var syncGot, asyncGot, lossless collector
	b.SubscribeSync("sync", syncGot.addSync)
	b.Subscribe("async", 10, asyncGot.add)
	b.Subscribe("lossless", -1, lossless.add)
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range each {
				var pl event.Payload = &event.Message{Role: "assistant", Text: fmt.Sprint(p, i), Delta: i%2 == 0}
				if _, err := b.Publish(fmt.Sprint("agent-", p), pl); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.Close()
	all := make([]uint64, publishers*each)
	for i := range all {
		all[i] = uint64(i + 1)
	}
	if diff := cmp.Diff(all, syncGot.seqs()); diff != "" {
		t.Errorf("sync subscriber seqs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all, lossless.seqs()); diff != "" {
		t.Errorf("lossless async subscriber seqs (-want +got):\n%s", diff)
	}
	seqs := asyncGot.seqs()
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("async subscriber got seq %d after %d", seqs[i], seqs[i-1])
		}
	}
	if got := uint64(len(seqs)) + b.Dropped("async"); got != uint64(len(all)) {
		t.Errorf("async delivered+dropped = %d, want %d", got, len(all))
	}
}

func TestSlowSubscriberDoesNotStallPublish(t *testing.T) {
	const n, limit = 10_000, 100
	b := bus.New("r", nil, nil)
	release := make(chan struct{})
	var handled atomic.Int64
	var slow collector
	b.Subscribe("slow", limit, func(e event.Event) {
		<-release // blocked until every event is published
		time.Sleep(time.Microsecond)
		slow.add(e)
		handled.Add(1)
	})
	important := 0
	for i := range n {
		var p event.Payload = &event.ToolOutput{CallID: "c", Text: fmt.Sprint(i)}
		if i%10 == 9 {
			p = &event.ToolOutput{CallID: "c", Text: fmt.Sprint(i), Final: true}
			important++
		}
		if _, err := b.Publish("main", p); err != nil {
			t.Fatal(err)
		}
	}
	if h := handled.Load(); h != 0 {
		t.Fatalf("slow subscriber handled %d events while blocked", h)
	}
	dropped := b.Dropped("slow")
	if dropped == 0 {
		t.Error("no delta was dropped for a subscriber far behind")
	}
	close(release)
	b.Close()
	finals := 0
	for _, e := range slow.events {
		if e.Payload.(*event.ToolOutput).Final {
			finals++
		}
	}
	if finals != important {
		t.Errorf("slow subscriber got %d final outputs, want every one of %d", finals, important)
	}
	if got := uint64(len(slow.events)) + dropped; got != n {
		t.Errorf("delivered %d + dropped %d != published %d", len(slow.events), dropped, n)
	}
	if len(slow.events) > limit+1+important {
		t.Errorf("delivered %d events, want at most %d (limit + finals)", len(slow.events), limit+1+important)
	}
}

func TestSyncErrorPropagates(t *testing.T) {
	b := bus.New("r", nil, nil)
	errDisk := errors.New("disk full")
	b.SubscribeSync("recorder", func(e event.Event) error {
		if e.Seq == 2 {
			return errDisk
		}
		return nil
	})
	var after, async collector
	b.SubscribeSync("json", after.addSync)
	b.Subscribe("terminal", -1, async.add)
	for i := range 3 {
		_, err := b.Publish("main", &event.SkillLearned{Name: fmt.Sprint(i)})
		if i != 1 {
			if err != nil {
				t.Errorf("publish %d: unexpected error %v", i, err)
			}
			continue
		}
		var se *bus.SubscriberError
		if !errors.Is(err, errDisk) || !errors.As(err, &se) {
			t.Fatalf("publish %d: error %v, want a *SubscriberError wrapping %v", i, err, errDisk)
		}
		if se.Subscriber != "recorder" || se.Seq != 2 || se.Type != event.TypeSkillLearned {
			t.Errorf("SubscriberError = %+v", se)
		}
	}
	b.Close()
	want := []uint64{1, 2, 3}
	if diff := cmp.Diff(want, after.seqs()); diff != "" {
		t.Errorf("other sync subscriber (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, async.seqs()); diff != "" {
		t.Errorf("async subscriber (-want +got):\n%s", diff)
	}
}

func TestCloseDrains(t *testing.T) {
	const n = 300
	b := bus.New("r", nil, nil)
	var a, c collector
	b.Subscribe("a", -1, func(e event.Event) { time.Sleep(50 * time.Microsecond); a.add(e) })
	b.Subscribe("c", 0, c.add)
	for i := range n {
		if _, err := b.Publish("main", &event.Compacted{BeforeChars: i}); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	if len(a.seqs()) != n || len(c.seqs()) != n {
		t.Errorf("after Close: a got %d, c got %d, want %d each", len(a.seqs()), len(c.seqs()), n)
	}
	if _, err := b.Publish("main", &event.Compacted{}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Publish after Close: %v, want ErrClosed", err)
	}
	b.Close() // idempotent
	cancel := b.Subscribe("late", 0, func(event.Event) { t.Error("late subscriber called") })
	cancel()
}

func TestCancel(t *testing.T) {
	b := bus.New("r", nil, nil)
	var got collector
	cancel := b.Subscribe("x", -1, got.add)
	publish := func(i int) {
		t.Helper()
		if _, err := b.Publish("main", &event.Compacted{BeforeChars: i}); err != nil {
			t.Fatal(err)
		}
	}
	publish(1)
	// Wait until the first event is handled, then cancel.
	for len(got.seqs()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	cancel() // idempotent
	publish(2)
	b.Close()
	if diff := cmp.Diff([]uint64{1}, got.seqs()); diff != "" {
		t.Errorf("cancelled subscriber (-want +got):\n%s", diff)
	}
}

func TestPublishRejectsBadPayloads(t *testing.T) {
	b := bus.New("r", nil, nil)
	defer b.Close()
	var nilMsg *event.Message
	for _, p := range []event.Payload{nil, nilMsg} {
		if _, err := b.Publish("main", p); err == nil {
			t.Errorf("Publish(%#v) succeeded", p)
		}
	}
	var got collector
	b.SubscribeSync("c", got.addSync)
	if _, err := b.Publish("main", &event.Compacted{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{1}, got.seqs()); diff != "" {
		t.Errorf("a rejected payload used a sequence number (-want +got):\n%s", diff)
	}
}

func TestUnknownPayloadIsRedacted(t *testing.T) {
	b := bus.New("r", redact.New([]string{"hunter2-secret"}, nil), nil)
	var got collector
	b.SubscribeSync("c", got.addSync)
	if _, err := b.Publish("main", &event.Unknown{Name: "Future", Data: json.RawMessage(`{"x":"hunter2-secret","n":1}`)}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	u := got.events[0].Payload.(*event.Unknown)
	if diff := cmp.Diff(`{"x":"[REDACTED]","n":1}`, string(u.Data)); diff != "" || got.events[0].Type != "Future" {
		t.Errorf("unknown payload (-want +got):\n%s type %s", diff, got.events[0].Type)
	}
}
