package shell

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// pattern is n bytes of distinguishable ASCII.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i*7%26)
		if i%61 == 60 {
			b[i] = '\n'
		}
	}
	return b
}

// wantKept is the head/tail rule, computed the obvious way.
func wantKept(all []byte) (string, int64) {
	if len(all) <= headBytes+tailBytes {
		return string(all), 0
	}
	omitted := len(all) - headBytes - tailBytes
	head := string(all[:headBytes])
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return fmt.Sprintf("%s[… %d bytes omitted …]\n%s", head, omitted, all[len(all)-tailBytes:]), int64(omitted)
}

func TestKeeperBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, headBytes - 1, headBytes, headBytes + 1, headBytes + tailBytes - 1,
		headBytes + tailBytes, headBytes + tailBytes + 1, headBytes + 2*tailBytes, 1 << 20} {
		all := pattern(n)
		for _, split := range []string{"one write", "byte by byte", "random"} {
			k := newKeeper(headBytes, tailBytes)
			switch split {
			case "one write":
				k.Write(all)
			case "byte by byte":
				for i := range all {
					k.Write(all[i : i+1])
				}
			default:
				r := rand.New(rand.NewPCG(uint64(n), 1))
				for rest := all; len(rest) > 0; {
					c := min(len(rest), r.IntN(3*tailBytes)+1)
					k.Write(rest[:c])
					rest = rest[c:]
				}
			}
			got, omitted := k.text()
			want, wantOmitted := wantKept(all)
			if got != want || omitted != wantOmitted {
				t.Errorf("%d bytes, %s: omitted %d (want %d); text differs: %v", n, split, omitted, wantOmitted, got != want)
			}
		}
	}
}

func TestKeeperExactCut(t *testing.T) {
	k := newKeeper(headBytes, tailBytes)
	all := bytes.Repeat([]byte("x"), headBytes+tailBytes+1)
	all[headBytes-1], all[headBytes] = 'H', 'T' // the last byte kept, the first dropped
	k.Write(all)
	got, omitted := k.text()
	if omitted != 1 {
		t.Fatalf("omitted %d, want 1", omitted)
	}
	head, tail, ok := strings.Cut(got, "\n[… 1 bytes omitted …]\n")
	if !ok || len(head) != headBytes || !strings.HasSuffix(head, "H") || len(tail) != tailBytes || strings.Contains(tail, "T") {
		t.Errorf("head %d bytes (ends %q), tail %d bytes", len(head), head[len(head)-1:], len(tail))
	}
}

func TestKeeperCutsOnCharacters(t *testing.T) {
	// "é" is two bytes; put one across each cut.
	all := append(bytes.Repeat([]byte("a"), headBytes-1), []byte("é")...)
	all = append(all, bytes.Repeat([]byte("b"), 5000)...)
	all = append(all, []byte("é")...)
	all = append(all, bytes.Repeat([]byte("c"), tailBytes-1)...)
	k := newKeeper(headBytes, tailBytes)
	k.Write(all)
	got, omitted := k.text()
	if !strings.Contains(got, fmt.Sprintf("[… %d bytes omitted …]", omitted)) || omitted != int64(len(all)-(headBytes-1)-(tailBytes-1)) {
		t.Errorf("omitted %d", omitted)
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("a character was split")
	}
}

func TestResultHeadAndTail(t *testing.T) {
	out := newKeeper(headBytes, tailBytes)
	all := pattern(100_000)
	out.Write(all)
	res := result(out, sandbox.Exit{Code: 0, Duration: 1500 * time.Millisecond}, time.Minute)
	want, _ := wantKept(all)
	if res.Content != want+"\nexit code: 0" && res.Content != want+"exit code: 0" {
		t.Errorf("content does not keep head and tail:\n%s", res.Content[:200])
	}
	var m map[string]any
	if err := json.Unmarshal(res.Metadata, &m); err != nil {
		t.Fatal(err)
	}
	if m["truncated"] != true || m["duration_ms"] != 1500.0 || m["exit_code"] != 0.0 || m["timed_out"] != false {
		t.Errorf("metadata %v", m)
	}
}

func TestResultOutputCap(t *testing.T) {
	out := newKeeper(headBytes, tailBytes)
	out.Write([]byte("lots\n"))
	res := result(out, sandbox.Exit{Code: 1, OutputTruncated: true}, time.Minute)
	if res.IsError || res.Content != "lots\n[output stopped at 4 MiB; the rest was discarded]\nexit code: 1" {
		t.Errorf("got %+v", res)
	}
	if !strings.Contains(string(res.Metadata), `"truncated":true`) {
		t.Errorf("metadata %s", res.Metadata)
	}
}
