package bus

import (
	"sync"
	"sync/atomic"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// asyncSub is an asynchronous subscriber: a queue and the goroutine that
// drains it.
type asyncSub struct {
	limit   int
	f       func(event.Event)
	dropped *atomic.Uint64
	// pending counts events queued or being handled.
	pending   atomic.Int64
	cancelled atomic.Bool

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []event.Event
	closed bool // no event will be queued any more
}

func newAsyncSub(limit int, f func(event.Event), dropped *atomic.Uint64) *asyncSub {
	s := &asyncSub{limit: limit, f: f, dropped: dropped}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// droppable reports whether e is a streaming delta that a lagging
// subscriber may miss: the complete message or output follows it.
func droppable(e event.Event) bool {
	switch p := e.Payload.(type) {
	case *event.ThinkingDelta:
		return true
	case *event.Message:
		return p.Delta
	case *event.ToolOutput:
		return !p.Final
	}
	return false
}

// enqueue queues e, or drops it when it is a delta and the subscriber is
// more than limit events behind. Called under the publish lock, so queue
// order is sequence order.
func (s *asyncSub) enqueue(e event.Event) {
	if s.limit >= 0 && s.pending.Load() > int64(s.limit) && droppable(e) {
		s.dropped.Add(1)
		return
	}
	s.pending.Add(1)
	s.mu.Lock()
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.cond.Signal()
}

// close marks the end of the stream: run returns once the queue is empty.
func (s *asyncSub) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Signal()
}

// cancel stops delivery now, dropping what is queued.
func (s *asyncSub) cancel() {
	s.cancelled.Store(true)
	s.close()
}

// run delivers queued events in order until the stream is closed and
// drained, or the subscriber is cancelled.
func (s *asyncSub) run() {
	var spare []event.Event
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.cond.Wait()
		}
		batch := s.queue
		s.queue = spare[:0]
		s.mu.Unlock()
		if len(batch) == 0 {
			return // closed and drained
		}
		for _, e := range batch {
			if s.cancelled.Load() {
				return
			}
			s.f(e)
			s.pending.Add(-1)
		}
		clear(batch) // let delivered payloads be collected
		spare = batch
	}
}
