package event

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDocsShowEveryType keeps docs/events.md honest: every event type has
// an example, and every example decodes into its type.
func TestDocsShowEveryType(t *testing.T) {
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Type]bool{}
	for i, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, `{"v":1,`) {
			continue
		}
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("docs/events.md:%d: %v", i+1, err)
			continue
		}
		if _, unknown := e.Payload.(*Unknown); unknown && e.Type != "" {
			// The envelope example has an empty data object of a real type.
			t.Errorf("docs/events.md:%d: unknown type %s", i+1, e.Type)
		}
		seen[e.Type] = true
	}
	for _, typ := range Types() {
		if !seen[typ] {
			t.Errorf("docs/events.md has no example of %s", typ)
		}
	}
}
