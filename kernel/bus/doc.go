// Package bus is the event bus of one run: it stamps, redacts once and fans
// out.
//
// Every event of a run goes through [Bus.Publish], which stamps the header
// (schema version, run id, agent id, sequence number, time), redacts the
// payload and delivers it, first to synchronous subscribers (the recorder,
// --json), then to asynchronous ones (terminal, surfaces).
//
// Invariants:
//
//   - No subscriber ever sees a secret: the payload is marshalled, redacted
//     with [redact.Redactor.JSON] and unmarshalled into a fresh payload of
//     the same type, so subscribers never share memory with the producer
//     (the producer keeps its unredacted original, which may be a tool's
//     real arguments).
//   - Sequence numbers start at 1 and increase by one per published event;
//     every subscriber receives events in sequence order.
//   - A synchronous subscriber's error is returned by Publish at once; it
//     does not stop delivery to the others.
//   - A slow asynchronous subscriber never stalls Publish: its queue is
//     unbounded for important events, and above its limit streaming deltas
//     are dropped for it alone and counted ([Bus.Dropped]).
//   - [Bus.Close] waits until every asynchronous subscriber has drained its
//     queue; each subscriber goroutine is owned by the bus.
package bus
