package vercel

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"sync"
)

// markerWriter streams the command's output, holding back the last bytes
// where the script's exit marker will be, and strips the marker.
type markerWriter struct {
	dst  io.Writer
	mark string
	buf  []byte
}

func (w *markerWriter) hold() int { return len(w.mark) + 16 }

func (w *markerWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if n := len(w.buf) - w.hold(); n > 0 {
		if _, err := w.dst.Write(w.buf[:n]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[n:]...)
	}
	return len(p), nil
}

// finish flushes what is held and returns the status the marker carried.
func (w *markerWriter) finish() (int, bool) {
	re := regexp.MustCompile(`\n` + regexp.QuoteMeta(w.mark) + `(\d+)\n?$`)
	loc := re.FindSubmatchIndex(w.buf)
	if loc == nil {
		_, _ = w.dst.Write(w.buf)
		return 0, false
	}
	_, _ = w.dst.Write(w.buf[:loc[0]])
	code, err := strconv.Atoi(string(w.buf[loc[2]:loc[3]]))
	return code, err == nil
}

// capped counts stdout and stderr against one cap (negative: none) and
// drops what exceeds it.
type capped struct {
	mu        sync.Mutex
	left      int64
	truncated bool
}

func (c *capped) to(dst io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		n := len(p)
		if c.left >= 0 {
			n = int(min(int64(n), c.left))
			c.left -= int64(n)
			if n < len(p) {
				c.truncated = true
			}
		}
		c.mu.Unlock()
		if n > 0 {
			if _, err := dst.Write(p[:n]); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	})
}

func (c *capped) dropped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncated
}

// tailBuffer keeps the last 4 KiB written, for classifying CLI failures.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// echoFilter drops the command line the CLI echoes to stderr before it
// runs a command. It holds stderr back until the echo has gone by (it
// comes first) or cannot be coming any more, then passes everything on.
type echoFilter struct {
	dst  io.Writer
	echo []byte
	buf  []byte
	done bool
}

func (e *echoFilter) Write(p []byte) (int, error) {
	if e.done {
		return e.dst.Write(p)
	}
	e.buf = append(e.buf, p...)
	if i := bytes.Index(e.buf, e.echo); i >= 0 && (i == 0 || e.buf[i-1] == '\n') {
		rest := append(e.buf[:i:i], e.buf[i+len(e.echo):]...)
		e.buf, e.done = nil, true
		if len(rest) > 0 {
			if _, err := e.dst.Write(rest); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	if len(e.buf) > len(e.echo)+4096 {
		e.finish()
	}
	return len(p), nil
}

// finish passes on whatever is still held.
func (e *echoFilter) finish() {
	if !e.done && len(e.buf) > 0 {
		_, _ = e.dst.Write(e.buf)
	}
	e.buf, e.done = nil, true
}
