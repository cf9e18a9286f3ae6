package event

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// marshal returns e's public shape, followed by a newline when line is
// set. It writes what encoding/json writes for the wire struct, byte for
// byte, but builds the envelope by hand around the encoded payload: the
// payload is encoded once and copied once, where marshalling the wire
// struct would validate and copy it twice more.
func (e Event) marshal(line bool) ([]byte, error) {
	if e.Payload == nil {
		return nil, fmt.Errorf("event %d (%s): no payload", e.Seq, e.Type)
	}
	data, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
	}
	t := e.Type
	if t == "" {
		t = e.Payload.EventType()
	}
	ts := e.Time.UTC()
	if y := ts.Year(); y < 0 || y > 9999 {
		// Not RFC 3339: encoding/json's own error says so.
		_, err := json.Marshal(ts)
		return nil, err
	}
	b := make([]byte, 0, len(data)+len(e.RunID)+len(e.AgentID)+len(t)+len(e.Prev)+128)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.SchemaVersion), 10)
	b = append(b, `,"run_id":`...)
	b = appendString(b, e.RunID)
	b = append(b, `,"agent_id":`...)
	b = appendString(b, e.AgentID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = ts.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","type":`...)
	b = appendString(b, string(t))
	b = append(b, `,"data":`...)
	b = append(b, data...)
	if e.Prev != "" {
		b = append(b, `,"prev":`...)
		b = appendString(b, e.Prev)
	}
	b = append(b, '}')
	if line {
		b = append(b, '\n')
	}
	return b, nil
}

// appendString appends s as encoding/json writes a string. Plain ASCII,
// which ids, types and hashes are, is copied as it is; anything else is
// left to encoding/json (HTML-safe escapes, invalid UTF-8, U+2028).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
