package recorder_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/kernel/redact"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// benchStream is a typical stretch of a run's stream: a command's output
// in chunks of about 200 bytes and the model's reply as short deltas.
func benchStream() map[string][]event.Payload {
	lines := []string{
		"=== RUN   TestCheckout/applies_discount_before_tax\n--- PASS: TestCheckout/applies_discount_before_tax (0.00s)\n",
		"ok  \tgithub.com/acme/shop/internal/cart\t0.412s\tcoverage: 81.3% of statements\n",
		"internal/cart/cart.go:88:14: undefined: discount.Apply\ninternal/cart/cart.go:91:2: too many return values\n",
	}
	var output, deltas []event.Payload
	for i := range 8 {
		var b strings.Builder
		for b.Len() < 200 {
			b.WriteString(lines[(i+b.Len())%len(lines)])
		}
		output = append(output, &event.ToolOutput{CallID: "toolu_01HZX3", Text: b.String()[:200]})
	}
	for _, d := range []string{"The test fails because ", "`Apply` was renamed to ", "`ApplyDiscount` in ", "internal/discount; I'll ", "update the call site ", "and run the tests again."} {
		deltas = append(deltas, &event.Message{Role: "assistant", Text: d, Delta: true})
	}
	return map[string][]event.Payload{
		"ToolOutput-200B": output,
		"MessageDelta":    deltas,
		"mix":             append(append([]event.Payload{}, output...), deltas...),
	}
}

// BenchmarkPublishRecorded measures one event's way through a run's bus:
// redaction, the recorder's synchronous write to events.jsonl in a real
// directory (NDJSON encoding, hash chain, one write(2) per event), and
// hand-off to two asynchronous subscribers like the terminal renderer
// (never drops) and a surface (drops deltas when it falls behind), which
// render and encode every event. Streaming output and model deltas are
// most of a run's events, so this is the per-event cost the engine pays
// while a command or the model streams; B/event is what each one adds to
// the recording. The time includes draining the asynchronous queues.
func BenchmarkPublishRecorded(b *testing.B) {
	red := redact.New([]string{"sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AbCdEfGh_IjKl"},
		map[string]string{"HOME": "/home/jane", "GITHUB_TOKEN": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "PATH": "/usr/bin:/bin"})
	for name, stream := range benchStream() {
		b.Run(name, func(b *testing.B) {
			state := b.TempDir()
			rec, err := recorder.Create(state, recorder.Inputs{RunID: recorder.NewRunID(time.Now()), Task: "fix the failing test",
				Workspace: "/src/shop", SparrowVersion: "bench", Started: time.Now()})
			if err != nil {
				b.Fatal(err)
			}
			bs := bus.New("bench", red, time.Now)
			bs.SubscribeSync("recorder", rec.Write)
			bs.Subscribe("terminal", -1, func(e event.Event) {
				switch p := e.Payload.(type) {
				case *event.ToolOutput:
					_, _ = io.WriteString(io.Discard, p.Text)
				case *event.Message:
					_, _ = io.WriteString(io.Discard, p.Text)
				}
			})
			bs.Subscribe("surface", 256, func(e event.Event) { _ = event.Encode(io.Discard, e) })
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := bs.Publish("main", stream[i%len(stream)]); err != nil {
					b.Fatal(err)
				}
			}
			bs.Close()
			b.StopTimer()
			if err := rec.Close(); err != nil {
				b.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(rec.Dir(), recorder.EventsFile))
			if err != nil {
				b.Fatal(err)
			}
			if fi.Size() == 0 {
				b.Fatal("nothing recorded")
			}
			b.ReportMetric(float64(fi.Size())/float64(b.N), "B/event")
		})
	}
}
