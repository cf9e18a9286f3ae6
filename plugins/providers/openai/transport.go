package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// parser reads one streamed answer, sending its events in order.
type parser func(*sseReader, func(provider.Event) error) error

// readError is a failure reading the stream itself (as opposed to bad
// content or the caller's send failing); stream classifies it.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// next returns the next SSE event; io.EOF and errStreamCut come back as
// they are, other failures as *readError.
func next(r *sseReader) (sseEvent, error) {
	ev, err := r.Next()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errStreamCut) {
		return ev, &readError{err}
	}
	return ev, err
}

// stream makes one attempt: POST body to path and parse the SSE answer.
// The response (its status line, the first byte the server sends) must
// arrive within s.firstByte, and the whole answer within s.timeout.
func (p *Provider) stream(ctx context.Context, s *settings, path string, body []byte, parse parser, send func(provider.Event) error) error {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	actx, cancelTimeout := context.WithTimeoutCause(actx, s.timeout, errStreamTimeout)
	defer cancelTimeout()
	first := time.AfterFunc(s.firstByte, func() { cancel(errFirstByte) })
	defer first.Stop()

	req, err := http.NewRequestWithContext(actx, http.MethodPost, s.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return &provider.Error{Class: provider.ErrBadRequest, Message: err.Error()}
	}
	s.header(req.Header, p.preset)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := p.client.Do(req)
	first.Stop() // the answer has begun: reasoning models may think for minutes before the first event
	if err != nil {
		return classifyTransport(ctx, actx, s, "POST "+path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return classifyHTTP(resp, b, p.now())
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		return notAStream(resp.Body)
	}
	err = parse(newSSEReader(resp.Body), send)
	var re *readError
	if errors.As(err, &re) {
		return classifyTransport(ctx, actx, s, "read stream", re.err)
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// notAStream explains a 2xx JSON answer where an event stream was asked
// for: an error object some servers send with status 200, or a server
// that ignores "stream": true.
func notAStream(r io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(r, maxErrorBody))
	if err != nil {
		return &readError{err}
	}
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return classifyStreamError(errorBody(b))
	}
	return &provider.Error{Class: provider.ErrServer,
		Message: "expected an event stream, got application/json: " + snippet(string(b))}
}
