package shell

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// What the model gets of long output: the first headBytes and the last
// tailBytes, with the size of the gap between.
const (
	headBytes = 10 << 10
	tailBytes = 20 << 10
)

// keeper keeps the head and the tail of everything written to it, in
// constant memory: the tail is a ring buffer.
type keeper struct {
	mu    sync.Mutex
	head  []byte
	ring  []byte // the last bytes after the head, circular
	pos   int    // where the next ring byte goes
	full  bool   // the ring has wrapped
	total int64
	hmax  int
}

func newKeeper(head, tail int) *keeper {
	return &keeper{head: make([]byte, 0, head), ring: make([]byte, tail), hmax: head}
}

// Write implements io.Writer; it never fails.
func (k *keeper) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(p)
	k.total += int64(n)
	if room := k.hmax - len(k.head); room > 0 {
		take := min(room, len(p))
		k.head = append(k.head, p[:take]...)
		p = p[take:]
	}
	if len(k.ring) == 0 {
		return n, nil
	}
	if len(p) >= len(k.ring) {
		p = p[len(p)-len(k.ring):]
		copy(k.ring, p)
		k.pos, k.full = 0, true
		return n, nil
	}
	c := copy(k.ring[k.pos:], p)
	if c < len(p) {
		copy(k.ring, p[c:])
		k.full = true
	}
	k.pos = (k.pos + len(p)) % len(k.ring)
	if k.pos == 0 && len(p) > 0 {
		k.full = true
	}
	return n, nil
}

// text is what was kept, valid UTF-8, and how many bytes were left out.
// Output up to head+tail bytes comes back whole; beyond that, the head, a
// line "[… N bytes omitted …]" and the tail. Cuts fall on character
// boundaries (the few bytes of a split character count as omitted).
func (k *keeper) text() (string, int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var tail []byte
	if k.full {
		tail = append(append(tail, k.ring[k.pos:]...), k.ring[:k.pos]...)
	} else {
		tail = k.ring[:k.pos]
	}
	omitted := k.total - int64(len(k.head)) - int64(len(tail))
	if omitted == 0 {
		return valid(string(k.head) + string(tail)), 0
	}
	head := trimPartialEnd(k.head)
	for cut := 0; cut < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); cut++ {
		tail = tail[1:]
	}
	omitted = k.total - int64(len(head)) - int64(len(tail))
	var b strings.Builder
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[… %d bytes omitted …]\n", omitted)
	b.Write(tail)
	return valid(b.String()), omitted
}

// trimPartialEnd drops a character cut short at the end of b.
func trimPartialEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// valid replaces invalid UTF-8 (binary output) so the text survives
// protobuf strings and JSON.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
