package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxSSEEvent bounds one event's data, so a broken server cannot make the
// plugin buffer without limit.
const maxSSEEvent = 16 << 20

// errStreamCut reports a stream that ended in the middle of a line.
var errStreamCut = errors.New("stream cut mid-line")

// sseEvent is one server-sent event: its type (empty when the server sent
// no `event:` field) and its data lines joined by "\n".
type sseEvent struct {
	Event string
	Data  string
	// Line is the line number of the event's last data line, for messages.
	Line int
}

// sseReader parses a text/event-stream body as the WHATWG spec says:
// lines end in LF or CRLF, `:` starts a comment, `data:` lines of one event
// are joined with newlines, a blank line dispatches the event, and events
// without data are skipped.
type sseReader struct {
	r    *bufio.Reader
	line int
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event with data. It returns io.EOF at a clean end
// of the stream and errStreamCut when the stream ends inside a line (a
// final `data: [DONE]` without its newline is still accepted).
func (s *sseReader) Next() (sseEvent, error) {
	var (
		ev      sseEvent
		data    strings.Builder
		hasData bool
	)
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				ev.Data = data.String()
				return ev, nil // last event lacked its blank line
			}
			return sseEvent{}, err
		}
		s.line++
		if line == "" {
			if hasData {
				ev.Data = data.String()
				return ev, nil
			}
			ev = sseEvent{}
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. ": OPENROUTER PROCESSING"
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
			ev.Line = s.line
			if data.Len() > maxSSEEvent {
				return sseEvent{}, fmt.Errorf("event at line %d exceeds %d bytes", s.line, maxSSEEvent)
			}
		}
	}
}

// readLine returns one line without its terminator. A final partial line
// is an error unless it is the `[DONE]` sentinel.
func (s *sseReader) readLine() (string, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxSSEEvent {
			return "", fmt.Errorf("line %d exceeds %d bytes", s.line+1, maxSSEEvent)
		}
		switch {
		case err == nil:
			return string(bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) == 0 {
				return "", io.EOF
			}
			if t := strings.TrimSpace(string(buf)); t == "data: [DONE]" || t == "data:[DONE]" {
				s.r = bufio.NewReader(strings.NewReader("\n")) // dispatch it, then EOF
				return t, nil
			}
			return "", errStreamCut
		default:
			return "", err
		}
	}
}

// snippet shortens a data line for an error message.
func snippet(s string) string {
	const limit = 200
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}
