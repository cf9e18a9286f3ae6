package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// benchEvents is a typical mix of a run's events, each with a recording's
// hash chain link: a 200-byte chunk of command output, a model text delta,
// a proposed edit with JSON arguments and a token usage report.
func benchEvents() []Event {
	t := time.Date(2026, 11, 23, 10, 12, 44, 123456789, time.UTC)
	output := strings.Repeat("ok  \tgithub.com/acme/shop/internal/cart\t0.412s\tcoverage: 81.3% of statements\n", 3)[:200]
	args := json.RawMessage(`{"path":"internal/cart/cart.go","old_string":"total := discount.Apply(sub)","new_string":"total := discount.ApplyDiscount(sub, cart.Coupon)"}`)
	payloads := []Payload{
		&ToolOutput{CallID: "toolu_01HZX3", Text: output},
		&Message{Role: "assistant", Text: "`Apply` was renamed to ", Delta: true},
		&ToolUseProposed{CallID: "toolu_01HZX4", Tool: "edit_file", Arguments: args, Risk: "mutating"},
		&TokenUsage{Model: "claude-sonnet-4-5", Input: 1834, Output: 212, CacheRead: 40211, TotalInput: 96502, TotalOutput: 3388},
	}
	out := make([]Event, len(payloads))
	for i, p := range payloads {
		out[i] = Event{SchemaVersion: SchemaVersion, RunID: "20261123-101200-a1b2c3", AgentID: "main", Seq: uint64(100 + i),
			Time: t, Type: p.EventType(), Payload: p,
			Prev: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	}
	return out
}

// BenchmarkEncode measures Encode, the NDJSON encoder the recorder runs
// synchronously for every event (under the bus's publish lock) and that
// `--json` runs for every line it prints, on each event of a typical mix.
// Streaming output and deltas make most of a run's events, so this cost
// is paid thousands of times per run.
func BenchmarkEncode(b *testing.B) {
	for _, e := range benchEvents() {
		b.Run(string(e.Type), func(b *testing.B) {
			var buf bytes.Buffer
			if err := Encode(&buf, e); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := Encode(&buf, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
