package bus_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/redact"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// BenchmarkPublish publishes tool output through one sync and two async
// subscribers, as a run with a recorder, a terminal and a surface does.
func BenchmarkPublish(b *testing.B) {
	r := redact.New([]string{"literal-secret-1"}, map[string]string{"OPENAI_API_KEY": "sk-not-a-real-key-0123456789"})
	for _, size := range []int{64, 4096} {
		text := strings.Repeat("ok  \tgithub.com/sparrow-cli/sparrow/kernel/pkg\t0.012s\n", size/52+1)[:size]
		b.Run(fmt.Sprintf("text=%dB", size), func(b *testing.B) {
			bs := bus.New("r", r, nil)
			bs.SubscribeSync("recorder", func(event.Event) error { return nil })
			bs.Subscribe("terminal", 10_000, func(event.Event) {})
			bs.Subscribe("surface", 10_000, func(event.Event) {})
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bs.Publish("main", &event.ToolOutput{CallID: "call_1", Text: text, Final: true}); err != nil {
					b.Fatal(err)
				}
			}
			bs.Close()
		})
	}
}
