package event

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Encode writes e as one NDJSON line, with one write.
func Encode(w io.Writer, e Event) error {
	b, err := e.marshal(true)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// LineError is a line of an event stream that does not decode.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ErrTruncated marks a last line without its newline that does not decode:
// what a crash mid-write leaves. Everything before it is intact.
var ErrTruncated = errors.New("truncated last line")

// Decode reads every event of an NDJSON stream. A malformed line is an
// error naming its line number; a malformed last line without a newline is
// reported as ErrTruncated (wrapped in a *LineError) together with every
// event before it, so a reader can keep what was recorded.
func Decode(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Event
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(b) == 0 && errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return out, &LineError{Line: line, Err: err}
		}
		complete := bytes.HasSuffix(b, []byte("\n"))
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var e Event
		if derr := json.Unmarshal(b, &e); derr != nil {
			if !complete {
				return out, &LineError{Line: line, Err: fmt.Errorf("%w: %v", ErrTruncated, derr)}
			}
			return out, &LineError{Line: line, Err: derr}
		}
		out = append(out, e)
		if !complete {
			return out, nil
		}
	}
}
