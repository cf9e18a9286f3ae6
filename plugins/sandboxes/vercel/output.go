package vercel

import (
	"bytes"
	"io"
)

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
