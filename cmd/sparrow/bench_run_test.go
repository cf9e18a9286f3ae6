package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// runBench lays out a workspace, a config and a recorded conversation of
// turns model turns, each asking for one sandboxed shell call.
func runBench(b *testing.B, turns int) (bin string, env []string, ws string) {
	b.Helper()
	bin = buildSparrow(b)
	plugins := builtPlugins(b)
	home := b.TempDir()
	ws = filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(filepath.Join(home, ".config", "sparrow"), 0o755)
	var conv struct {
		Turns []map[string]any `json:"turns"`
	}
	for i := range turns - 1 {
		conv.Turns = append(conv.Turns, map[string]any{"events": []any{
			map[string]any{"text": fmt.Sprintf("step %d", i)},
			map[string]any{"tool_call": map[string]any{"id": fmt.Sprintf("c%d", i), "name": "shell", "arguments": map[string]any{"command": "echo " + strconv.Itoa(i)}}},
			map[string]any{"usage": map[string]any{"input": 1000, "output": 20}},
			map[string]any{"stop": "tool_use"},
		}})
	}
	conv.Turns = append(conv.Turns, map[string]any{"events": []any{map[string]any{"text": "done"}, map[string]any{"stop": "end_turn"}}})
	data, _ := json.Marshal(conv)
	convPath := filepath.Join(home, "conv.json")
	os.WriteFile(convPath, data, 0o644)
	os.WriteFile(filepath.Join(home, ".config", "sparrow", "sparrow.hcl"), []byte(fmt.Sprintf(
		"model = %q\nprovider \"replay\" {\n  file = %q\n}\nautonomy {\n  level = \"trusted\"\n}\nbudget {\n  max_turns = 60\n}\n", "replay", convPath)), 0o644)
	env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + plugins}
	return bin, env, ws
}

// runOnce runs sparrow to completion and returns its events, the wall time
// and the peak RSS of its whole process tree (plugins included), in KiB.
func runOnce(b *testing.B, bin string, env []string, ws string) ([]event.Event, time.Time, int) {
	cmd := exec.Command(bin, "-C", ws, "run", "--json", "go")
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var peak int
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			total := rssOf(cmd.Process.Pid)
			for _, p := range descendants(cmd.Process.Pid) {
				total += rssOf(p.pid)
			}
			mu.Lock()
			peak = max(peak, total)
			mu.Unlock()
		}
	}()
	err := cmd.Wait()
	close(done)
	if err != nil {
		b.Fatalf("run: %v\n%s", err, out.String())
	}
	events, err := event.Decode(&out)
	if err != nil {
		b.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return events, start, peak
}

func rssOf(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// BenchmarkRun measures `sparrow run` against a recorded model:
//   - start-ms: process start to the first model request (RouteSelected is
//     published just before the request);
//   - turn-ms: per-turn overhead, from the end of one model response to the
//     next request, with one sandboxed shell call per turn, averaged;
//   - rss-MiB: peak RSS of the whole process tree.
func BenchmarkRun(b *testing.B) {
	for _, turns := range []int{10, 60} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			bin, env, ws := runBench(b, turns)
			var startMS, turnMS, rss float64
			for b.Loop() {
				events, start, peak := runOnce(b, bin, env, ws)
				last := events[len(events)-1].Time
				var route time.Time
				for _, e := range events {
					if e.Type == event.TypeRouteSelected {
						route = e.Time
					}
				}
				startMS += float64(route.Sub(start)) / 1e6
				turnMS += float64(last.Sub(route)) / 1e6 / float64(turns)
				rss += float64(peak) / 1024
			}
			n := float64(b.N)
			b.ReportMetric(startMS/n, "start-ms")
			b.ReportMetric(turnMS/n, "turn-ms")
			b.ReportMetric(rss/n, "rss-MiB")
		})
	}
}
