package pluginhost

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
)

// stderrTail keeps the last lines a plugin wrote to stderr, so a failure
// can be reported with them. go-plugin writes whole lines.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
	max   int
	// panic is the first "panic:" or "fatal error:" line, kept even when
	// the stack trace after it scrolls it out of lines.
	panic string
}

func newStderrTail(max int) *stderrTail { return &stderrTail{max: max} }

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		line = readableLine(line)
		if line == "" {
			continue
		}
		if t.panic == "" && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
			t.panic = line
		}
		t.lines = append(t.lines, line)
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	return len(p), nil
}

// Lines returns a copy of the kept lines, oldest first.
func (t *stderrTail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.lines...)
	if t.panic != "" && !slices.Contains(lines, t.panic) {
		lines = append([]string{t.panic, "..."}, lines...)
	}
	return lines
}

// readableLine turns an hclog JSON line into "level: message k=v", and
// drops debug and trace lines: they are in the log file, and a failure
// report needs the plugin's complaints, not its chatter.
func readableLine(line string) string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return line
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(line)))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return line
	}
	msg, _ := m["@message"].(string)
	level, _ := m["@level"].(string)
	if msg == "" {
		return line
	}
	if level == "debug" || level == "trace" {
		return ""
	}
	var b strings.Builder
	if level != "" {
		b.WriteString(level + ": ")
	}
	b.WriteString(msg)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if v := m[k]; !strings.HasPrefix(k, "@") {
			b.WriteString(" " + k + "=")
			j, _ := json.Marshal(v)
			b.Write(j)
		}
	}
	return b.String()
}
