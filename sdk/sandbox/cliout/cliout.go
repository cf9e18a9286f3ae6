// Package cliout shapes the output of a vendor CLI that runs a command
// remotely (modal, daytona, vercel-sandbox): such CLIs often lose the
// command's exit status, so a wrapper prints it behind a marker that
// MarkerWriter strips; Cap enforces one output cap over stdout and stderr;
// Tail keeps the end of the CLI's own stderr to explain its failures.
package cliout

import (
	"io"
	"regexp"
	"strconv"
	"sync"
)

// MarkerWriter streams a command's output to its destination, holding back
// the last bytes, where the wrapper's exit marker will be, and strips the
// marker. It is not safe for concurrent writes.
type MarkerWriter struct {
	dst  io.Writer
	mark string
	buf  []byte
}

// NewMarkerWriter writes to dst everything but the final "\nMARK<status>\n".
func NewMarkerWriter(dst io.Writer, mark string) *MarkerWriter {
	return &MarkerWriter{dst: dst, mark: mark}
}

func (w *MarkerWriter) hold() int { return len(w.mark) + 16 }

// Write implements io.Writer.
func (w *MarkerWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if n := len(w.buf) - w.hold(); n > 0 {
		if _, err := w.dst.Write(w.buf[:n]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[n:]...)
	}
	return len(p), nil
}

// Finish flushes what is held and returns the status the marker carried;
// ok is false when the output ended without one (the CLI failed, or the
// command never finished).
func (w *MarkerWriter) Finish() (status int, ok bool) {
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

// Cap counts stdout and stderr against one cap and drops what exceeds it.
type Cap struct {
	mu        sync.Mutex
	left      int64
	truncated bool
}

// NewCap allows limit bytes in all; a negative limit allows any amount.
func NewCap(limit int64) *Cap { return &Cap{left: limit} }

// To returns a writer to dst that counts against the cap.
func (c *Cap) To(dst io.Writer) io.Writer {
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

// Truncated reports whether anything was dropped.
func (c *Cap) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncated
}

// Tail keeps the last 4 KiB written to it. It is safe for concurrent use.
type Tail struct {
	mu sync.Mutex
	b  []byte
}

// Write implements io.Writer.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

// String returns what is kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
