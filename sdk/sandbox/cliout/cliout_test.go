package cliout_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

func TestMarkerWriter(t *testing.T) {
	const mark = "__sparrow_exit_abc="
	for _, tt := range []struct {
		name, in, out string
		code          int
		ok            bool
	}{
		{"status stripped", "hello\nworld\n\n" + mark + "7\n", "hello\nworld\n", 7, true},
		{"no trailing newline in output", "partial\n" + mark + "0\n", "partial", 0, true},
		{"no marker: the CLI failed", "Error: not logged in\n", "Error: not logged in\n", 0, false},
		{"a marker-looking line mid-output is output", "\n" + mark + "3\nmore\n", "\n" + mark + "3\nmore\n", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Byte by byte: the marker straddles every possible chunk edge.
			var got bytes.Buffer
			w := cliout.NewMarkerWriter(&got, mark)
			for i := range len(tt.in) {
				if _, err := w.Write([]byte{tt.in[i]}); err != nil {
					t.Fatal(err)
				}
			}
			code, ok := w.Finish()
			if got.String() != tt.out || code != tt.code || ok != tt.ok {
				t.Errorf("got %q, %d, %v; want %q, %d, %v", got.String(), code, ok, tt.out, tt.code, tt.ok)
			}
		})
	}
}

func TestCapSharesOneLimit(t *testing.T) {
	var out, errOut bytes.Buffer
	c := cliout.NewCap(10)
	stdout, stderr := c.To(&out), c.To(&errOut)
	_, _ = stdout.Write([]byte("123456"))
	_, _ = stderr.Write([]byte("abcdef"))
	if out.String() != "123456" || errOut.String() != "abcd" || !c.Truncated() {
		t.Errorf("stdout %q stderr %q truncated %v", out.String(), errOut.String(), c.Truncated())
	}
	unlimited := cliout.NewCap(-1)
	var all bytes.Buffer
	_, _ = unlimited.To(&all).Write([]byte(strings.Repeat("x", 1<<16)))
	if all.Len() != 1<<16 || unlimited.Truncated() {
		t.Error("a negative cap dropped output")
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tail cliout.Tail
	_, _ = tail.Write([]byte(strings.Repeat("a", 5000)))
	_, _ = tail.Write([]byte("the reason\n"))
	if s := tail.String(); len(s) != 4096 || !strings.HasSuffix(s, "the reason\n") {
		t.Errorf("tail %d bytes ending %q", len(s), s[len(s)-12:])
	}
}
