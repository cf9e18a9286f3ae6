package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEveryTypeRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	var want []Event
	for i, typ := range Types() {
		p := New(typ)
		if p == nil || p.EventType() != typ {
			t.Fatalf("New(%s) = %T", typ, p)
		}
		if tp, ok := p.(*ToolUseProposed); ok {
			tp.Arguments = json.RawMessage(`{}`)
		}
		e := Event{SchemaVersion: SchemaVersion, RunID: "r1", AgentID: "main", Seq: uint64(i + 1),
			Time: time.Date(2026, 11, 22, 10, 0, i, 0, time.UTC), Type: typ, Payload: p}
		want = append(want, e)
		if err := Encode(&buf, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestShape(t *testing.T) {
	e := Event{SchemaVersion: 1, RunID: "r1", AgentID: "main", Seq: 3, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Type: TypeToolUseProposed, Payload: &ToolUseProposed{CallID: "c1", Tool: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`), Risk: "read-only"}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"run_id":"r1","agent_id":"main","seq":3,"time":"2026-01-02T03:04:05Z","type":"ToolUseProposed","data":{"call_id":"c1","tool":"read_file","arguments":{"path":"a.go"},"risk":"read-only"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := `{"v":1,"run_id":"r","agent_id":"main","seq":1,"time":"2026-01-02T03:04:05Z","type":"Message","data":{"role":"assistant","text":"hi"}}`
	cases := []struct {
		name      string
		in        string
		events    int
		wantLine  int
		truncated bool
	}{
		{"clean", good + "\n" + good + "\n", 2, 0, false},
		{"no final newline but whole", good + "\n" + good, 2, 0, false},
		{"truncated last line", good + "\n" + good[:40], 1, 2, true},
		{"garbage in the middle", good + "\n{nope\n" + good + "\n", 1, 2, false},
		{"unknown type from the future", strings.Replace(good, `"Message"`, `"Hologram"`, 1) + "\n", 1, 0, false},
		{"newer schema", strings.Replace(good, `"v":1`, `"v":9`, 1) + "\n", 0, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events, err := Decode(strings.NewReader(tc.in))
			if len(events) != tc.events {
				t.Errorf("kept %d events, want %d", len(events), tc.events)
			}
			var le *LineError
			switch {
			case tc.wantLine == 0 && err != nil:
				t.Errorf("err = %v", err)
			case tc.wantLine != 0 && (!errors.As(err, &le) || le.Line != tc.wantLine):
				t.Errorf("err = %v, want line %d", err, tc.wantLine)
			case tc.truncated != errors.Is(err, ErrTruncated):
				t.Errorf("truncated = %v, err %v", !tc.truncated, err)
			}
		})
	}
}
