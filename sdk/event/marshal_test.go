package event

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// wireEncoding is how Encode wrote an event before it built the envelope
// by hand: encoding/json over the wire struct. The recorded format must
// not change by a byte.
func wireEncoding(e Event) ([]byte, error) {
	data, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, err
	}
	t := e.Type
	if t == "" {
		t = e.Payload.EventType()
	}
	b, err := json.Marshal(wire{e.SchemaVersion, e.RunID, e.AgentID, e.Seq, e.Time.UTC(), t, data, e.Prev})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// checkSameAsWire fails when Encode and json.Marshal do not write what
// wireEncoding writes, or fail where it does not.
func checkSameAsWire(t *testing.T, e Event) {
	t.Helper()
	want, werr := wireEncoding(e)
	var got bytes.Buffer
	err := Encode(&got, e)
	if (err != nil) != (werr != nil) || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("Encode(%+v)\n= %q (%v)\nwant %q (%v)", e, got.Bytes(), err, want, werr)
	}
	if err != nil {
		return
	}
	m, err := json.Marshal(e)
	if err != nil || !bytes.Equal(append(m, '\n'), want) {
		t.Fatalf("json.Marshal(%+v)\n= %q (%v)\nwant %q", e, m, err, want[:len(want)-1])
	}
}

func TestEncodeMatchesWireStruct(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	base := Event{SchemaVersion: SchemaVersion, RunID: "20261123-101200-a1b2c3", AgentID: "main", Seq: 7,
		Time: time.Date(2026, 11, 23, 10, 12, 44, 123456789, time.UTC), Type: TypeMessage,
		Payload: &Message{Role: "assistant", Text: "hi <b>&</b>\u2028 \"q\" \\ \x01 é \xff"}}
	cases := map[string]func(e *Event){
		"plain":                 func(*Event) {},
		"prev":                  func(e *Event) { e.Prev = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" },
		"type from the payload": func(e *Event) { e.Type = "" },
		"time in another zone":  func(e *Event) { e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, paris) },
		"time with millis":      func(e *Event) { e.Time = time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC) },
		"zero time":             func(e *Event) { e.Time = time.Time{} },
		"year 10000":            func(e *Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"negative year":         func(e *Event) { e.Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"ids to escape":         func(e *Event) { e.RunID, e.AgentID, e.Prev = "r<1>&\"", "a\u2028\xfe\n", "p\\\x7f" },
		"empty ids":             func(e *Event) { e.RunID, e.AgentID = "", "" },
		"max seq":               func(e *Event) { e.Seq, e.SchemaVersion = ^uint64(0), -3 },
		"raw arguments": func(e *Event) {
			e.Type, e.Payload = TypeToolUseProposed, &ToolUseProposed{CallID: "c1", Tool: "edit_file",
				Arguments: json.RawMessage(" {\"path\" : \"<a>.go\",\n \"n\": [1, 2]} "), Risk: "mutating"}
		},
		"bad raw arguments": func(e *Event) {
			e.Type, e.Payload = TypeToolUseProposed, &ToolUseProposed{Arguments: json.RawMessage(`{"path":`)}
		},
		"unknown type": func(e *Event) {
			e.Type, e.Payload = "Hologram", &Unknown{Name: "Hologram", Data: json.RawMessage(`{"x": "<y>"}`)}
		},
		"unknown without data": func(e *Event) { e.Type, e.Payload = "Hologram", &Unknown{Name: "Hologram"} },
		"nil pointer payload":  func(e *Event) { e.Payload = (*Message)(nil) },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			e := base
			change(&e)
			checkSameAsWire(t, e)
		})
	}
	for _, typ := range Types() {
		t.Run(string(typ), func(t *testing.T) {
			e := base
			e.Type, e.Payload = typ, New(typ)
			if tp, ok := e.Payload.(*ToolUseProposed); ok {
				tp.Arguments = json.RawMessage(`{}`)
			}
			checkSameAsWire(t, e)
		})
	}
}

func TestEncodeWithoutPayload(t *testing.T) {
	var b bytes.Buffer
	if err := Encode(&b, Event{Seq: 3, Type: TypeMessage}); err == nil || b.Len() != 0 {
		t.Errorf("Encode without a payload: %v, wrote %q", err, b.Bytes())
	}
}

// FuzzEncode compares Encode with encoding/json over the wire struct for
// arbitrary ids, text and times.
func FuzzEncode(f *testing.F) {
	f.Add("r1", "main", "hello", "", int64(0), uint64(1))
	f.Add("r<&>", "a\u2028", "\xff\x00\"\\", "sha256:x", int64(1<<62), uint64(1<<63))
	f.Fuzz(func(t *testing.T, run, agent, text, prev string, nanos int64, seq uint64) {
		checkSameAsWire(t, Event{SchemaVersion: SchemaVersion, RunID: run, AgentID: agent, Seq: seq,
			Time: time.Unix(0, nanos), Type: TypeToolOutput, Payload: &ToolOutput{CallID: agent, Text: text}, Prev: prev})
	})
}
