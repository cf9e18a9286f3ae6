package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/redact"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// DefaultAgentID is the agent id stamped when Publish is given "".
const DefaultAgentID = "main"

// ErrClosed is returned by Publish after Close.
var ErrClosed = errors.New("event bus is closed")

// SubscriberError is a synchronous subscriber's failure to take an event.
type SubscriberError struct {
	// Subscriber is the name given to SubscribeSync.
	Subscriber string
	// Seq and Type identify the event.
	Seq  uint64
	Type event.Type
	Err  error
}

func (e *SubscriberError) Error() string {
	return fmt.Sprintf("subscriber %s: event %d (%s): %v", e.Subscriber, e.Seq, e.Type, e.Err)
}

func (e *SubscriberError) Unwrap() error { return e.Err }

// Bus is the event bus of one run. It is safe for concurrent use.
type Bus struct {
	runID string
	red   *redact.Redactor
	clock func() time.Time

	// mu is the publish lock: it orders sequence numbers, delivery and
	// changes to the subscriber lists.
	mu      sync.Mutex
	seq     uint64
	closed  bool
	syncs   []syncSub
	asyncs  []*asyncSub
	dropped map[string]*atomic.Uint64
	// wg counts the asynchronous subscribers' goroutines.
	wg sync.WaitGroup
}

type syncSub struct {
	name string
	f    func(event.Event) error
}

// New returns the bus of run runID. r redacts every payload (nil: a
// Redactor with patterns only); clock stamps event times (nil: time.Now).
func New(runID string, r *redact.Redactor, clock func() time.Time) *Bus {
	if r == nil {
		r = redact.New(nil, nil)
	}
	if clock == nil {
		clock = time.Now
	}
	return &Bus{runID: runID, red: r, clock: clock, dropped: map[string]*atomic.Uint64{}}
}

// Publish stamps p as the run's next event (schema version, run id, agent
// id — "" means [DefaultAgentID] —, sequence number, time in UTC),
// redacts it into a fresh payload, delivers it to the synchronous
// subscribers in subscription order and queues it for the asynchronous
// ones. It returns the event as delivered.
//
// p itself is neither changed nor retained. An error from a synchronous
// subscriber is returned as a *SubscriberError (joined when several fail)
// after every subscriber has had the event; the event is published all
// the same. Publish must not be called from a synchronous subscriber.
func (b *Bus) Publish(agentID string, p event.Payload) (event.Event, error) {
	clean, err := b.redact(p)
	if err != nil {
		return event.Event{}, fmt.Errorf("publish: %w", err)
	}
	if agentID == "" {
		agentID = DefaultAgentID
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return event.Event{}, fmt.Errorf("publish %s: %w", clean.EventType(), ErrClosed)
	}
	b.seq++
	e := event.Event{
		SchemaVersion: event.SchemaVersion,
		RunID:         b.runID,
		AgentID:       agentID,
		Seq:           b.seq,
		Time:          b.clock().UTC(),
		Type:          clean.EventType(),
		Payload:       clean,
	}
	var errs []error
	for _, s := range b.syncs {
		if err := s.f(e); err != nil {
			errs = append(errs, &SubscriberError{Subscriber: s.name, Seq: e.Seq, Type: e.Type, Err: err})
		}
	}
	for _, s := range b.asyncs {
		s.enqueue(e)
	}
	return e, errors.Join(errs...)
}

// redact returns a redacted deep copy of p: marshalled, passed through the
// Redactor and unmarshalled into a fresh payload of the same type.
func (b *Bus) redact(p event.Payload) (event.Payload, error) {
	if p == nil {
		return nil, errors.New("nil payload")
	}
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("nil %T payload", p)
	}
	if u, ok := p.(*event.Unknown); ok {
		return b.redactUnknown(u)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("marshal %s: %w", p.EventType(), err)
	}
	clean, err := b.red.JSON(raw)
	if err != nil {
		return nil, fmt.Errorf("redact %s: %w", p.EventType(), err)
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		fresh := reflect.New(t.Elem())
		if err := json.Unmarshal(clean, fresh.Interface()); err != nil {
			return nil, fmt.Errorf("copy %s: %w", p.EventType(), err)
		}
		return fresh.Interface().(event.Payload), nil
	}
	fresh := reflect.New(t)
	if err := json.Unmarshal(clean, fresh.Interface()); err != nil {
		return nil, fmt.Errorf("copy %s: %w", p.EventType(), err)
	}
	return fresh.Elem().Interface().(event.Payload), nil
}

// redactUnknown copies an event of a type this Sparrow does not know,
// redacting its raw data.
func (b *Bus) redactUnknown(u *event.Unknown) (event.Payload, error) {
	out := &event.Unknown{Name: u.Name}
	if len(u.Data) == 0 {
		return out, nil
	}
	clean, err := b.red.JSON(u.Data)
	if err != nil {
		return nil, fmt.Errorf("redact %s: %w", u.Name, err)
	}
	out.Data = clean
	return out, nil
}

// SubscribeSync adds a subscriber called inline by Publish, in order,
// under the publish lock, for every event published after it subscribed.
// Its error is returned by Publish: the recorder uses this so that it
// never loses an event and a failed write surfaces at once. f must be
// quick and must not call Publish, Subscribe, SubscribeSync or Close.
// Subscribing after Close does nothing.
func (b *Bus) SubscribeSync(name string, f func(event.Event) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.syncs = append(b.syncs, syncSub{name, f})
}

// Subscribe adds an asynchronous subscriber: f runs on its own goroutine,
// in sequence order, fed by its own unbounded queue, so a slow subscriber
// never stalls Publish. While more than limit events wait for it (the one
// f is handling included), streaming deltas — a Message with Delta, a
// ThinkingDelta, a ToolOutput that is not Final — are dropped for it and
// counted in [Bus.Dropped]; other events always queue. limit 0 drops
// deltas whenever the subscriber is behind; a negative limit never drops.
//
// cancel stops delivery: f is not called again once cancel returns,
// except for a call already in progress. Subscribing after Close returns
// a cancel that does nothing, and f is never called.
func (b *Bus) Subscribe(name string, limit int, f func(event.Event)) (cancel func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return func() {}
	}
	counter := b.dropped[name]
	if counter == nil {
		counter = new(atomic.Uint64)
		b.dropped[name] = counter
	}
	s := newAsyncSub(limit, f, counter)
	b.asyncs = append(b.asyncs, s)
	b.wg.Go(s.run)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.cancel()
			b.mu.Lock()
			defer b.mu.Unlock()
			for i, x := range b.asyncs {
				if x == s {
					b.asyncs = append(b.asyncs[:i], b.asyncs[i+1:]...)
					break
				}
			}
		})
	}
}

// Dropped returns how many streaming deltas were dropped for the
// asynchronous subscribers named name.
func (b *Bus) Dropped(name string) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.dropped[name]; c != nil {
		return c.Load()
	}
	return 0
}

// Close stops accepting events (Publish returns ErrClosed) and waits until
// every asynchronous subscriber has drained its queue. It is safe to call
// more than once; it must not be called from a subscriber.
func (b *Bus) Close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		for _, s := range b.asyncs {
			s.close()
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
}
