package openai

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(s string) ([]sseEvent, error) {
	r := newSSEReader(strings.NewReader(s))
	var out []sseEvent
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []sseEvent
		err      error
	}{
		{name: "lf", in: "data: a\n\ndata: b\n\n", want: []sseEvent{{Data: "a", Line: 1}, {Data: "b", Line: 3}}},
		{name: "crlf and comments", in: ": ping\r\n\r\nevent: x\r\ndata: 1\r\n\r\n",
			want: []sseEvent{{Event: "x", Data: "1", Line: 4}}},
		{name: "multi-line data", in: "data: {\"a\":\ndata: 1}\n\n", want: []sseEvent{{Data: "{\"a\":\n1}", Line: 2}}},
		{name: "no space after colon", in: "data:x\n\n", want: []sseEvent{{Data: "x", Line: 1}}},
		{name: "event without data is skipped", in: "event: ping\n\ndata: y\n\n", want: []sseEvent{{Data: "y", Line: 3}}},
		{name: "id and retry ignored", in: "id: 7\nretry: 10\ndata: z\n\n", want: []sseEvent{{Data: "z", Line: 3}}},
		{name: "last event lacks blank line", in: "data: a\n", want: []sseEvent{{Data: "a", Line: 1}}},
		{name: "DONE without newline", in: "data: a\n\ndata: [DONE]", want: []sseEvent{{Data: "a", Line: 1}, {Data: "[DONE]", Line: 3}}},
		{name: "cut mid-line", in: "data: a\n\ndata: {\"x", want: []sseEvent{{Data: "a", Line: 1}}, err: errStreamCut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.in)
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

func TestSSELongLine(t *testing.T) {
	long := strings.Repeat("x", 200_000) // beyond bufio's buffer
	got, err := readAll("data: " + long + "\n\n")
	if err != nil || len(got) != 1 || got[0].Data != long {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}
