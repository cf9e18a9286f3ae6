package recorder

import (
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// A failed write poisons the recorder, so that no line is appended after
// a torn one.
func TestFailedWriteIsSticky(t *testing.T) {
	r, err := Create(t.TempDir(), Inputs{RunID: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	e := event.Event{SchemaVersion: event.SchemaVersion, RunID: "r1", Seq: 1, Type: event.TypeCompacted, Payload: &event.Compacted{}}
	_ = r.f.Close() // the disk goes away
	if err := r.Write(e); err == nil {
		t.Fatal("Write to a closed file succeeded")
	}
	e.Seq = 2
	if err := r.Write(e); err == nil || !strings.Contains(err.Error(), "earlier write failed") {
		t.Errorf("second Write: %v, want an earlier-write error", err)
	}
}
