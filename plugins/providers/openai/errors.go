package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// apiError is the error object OpenAI and compatible servers put in error
// bodies and in-stream error events. Code is a string for OpenAI and a
// number for some compatible servers, so it stays raw.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Param   string          `json:"param"`
}

// code returns the error code as a string, whatever its JSON type.
func (e *apiError) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return strings.Trim(string(e.Code), `"`)
}

// errorBody extracts the vendor's message from an error response body. It
// understands {"error": {...}}, {"error": "text"}, {"message": "text"} and
// {"detail": "text"}, and falls back to the raw body.
func errorBody(body []byte) apiError {
	var wrapped struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &wrapped) == nil {
		var e apiError
		if json.Unmarshal(wrapped.Error, &e) == nil && e.Message != "" {
			return e
		}
		var s string
		if json.Unmarshal(wrapped.Error, &s) == nil && s != "" {
			return apiError{Message: s}
		}
		if wrapped.Message != "" {
			return apiError{Message: wrapped.Message}
		}
		if wrapped.Detail != nil {
			return apiError{Message: fmt.Sprint(wrapped.Detail)}
		}
	}
	return apiError{Message: snippet(strings.TrimSpace(string(body)))}
}

// classifyHTTP turns a non-2xx response into a *provider.Error.
func classifyHTTP(resp *http.Response, body []byte, now time.Time) *provider.Error {
	ae := errorBody(body)
	msg := ae.Message
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	if c := ae.code(); c != "" && !strings.Contains(msg, c) {
		msg += " [" + c + "]"
	}
	e := &provider.Error{Class: classOf(resp.StatusCode, ae), Message: msg, HTTPStatus: resp.StatusCode}
	if e.Class == provider.ErrRateLimited || e.Class == provider.ErrOverloaded {
		e.RetryAfter = retryAfter(resp.Header, now)
	}
	return e
}

// classOf maps a status code and the vendor's error to an error class.
func classOf(status int, ae apiError) provider.ErrorClass {
	code, lower := ae.code(), strings.ToLower(ae.Message)
	switch {
	case isContextTooLong(code, lower):
		return provider.ErrContextTooLong
	case code == "content_filter" || code == "content_policy_violation":
		return provider.ErrRefusal
	case status == http.StatusTooManyRequests:
		return provider.ErrRateLimited
	case status == 529 || status == http.StatusServiceUnavailable || (status >= 500 && strings.Contains(lower, "overloaded")):
		return provider.ErrOverloaded
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return provider.ErrTimeout
	case status >= 500:
		return provider.ErrServer
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return provider.ErrAuth
	}
	return provider.ErrBadRequest
}

func isContextTooLong(code, lowerMsg string) bool {
	return code == "context_length_exceeded" ||
		strings.Contains(lowerMsg, "maximum context length") ||
		strings.Contains(lowerMsg, "context length exceeded") ||
		strings.Contains(lowerMsg, "context_length_exceeded")
}

// classifyStreamError classifies an error object a server sent inside a
// stream (OpenRouter's {"error": ...} chunk, the Responses API's error and
// response.failed events), where there is no status code to go by.
func classifyStreamError(ae apiError) *provider.Error {
	msg := ae.Message
	if msg == "" {
		msg = "the server reported an error in the stream"
	}
	code := ae.code()
	if code != "" && !strings.Contains(msg, code) {
		msg += " [" + code + "]"
	}
	status := http.StatusInternalServerError
	switch {
	case code == "rate_limit_exceeded" || code == "429":
		status = http.StatusTooManyRequests
	case code == "invalid_prompt" || code == "invalid_request_error" || code == "400":
		status = http.StatusBadRequest
	case code == "503" || code == "529":
		status = http.StatusServiceUnavailable
	}
	return &provider.Error{Class: classOf(status, ae), Message: msg}
}

// retryAfter reads the server's hint: retry-after-ms, Retry-After (seconds
// or an HTTP date), else OpenAI's x-ratelimit-reset-{requests,tokens}
// (durations such as "6m0s" or "20ms"), preferring the limit that is
// exhausted. Zero when there is none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	var best, exhausted time.Duration
	for _, kind := range []string{"requests", "tokens"} {
		d, err := time.ParseDuration(h.Get("X-Ratelimit-Reset-" + kind))
		if err != nil || d <= 0 {
			continue
		}
		best = max(best, d)
		if h.Get("X-Ratelimit-Remaining-"+kind) == "0" {
			exhausted = max(exhausted, d)
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return best
}

// errFirstByte and errStreamTimeout are the causes the attempt's context
// is cancelled with when a timeout fires.
var (
	errFirstByte     = errors.New("first-byte timeout")
	errStreamTimeout = errors.New("stream timeout")
)

// classifyTransport turns a failure to send the request or read the
// stream into a *provider.Error, or returns the caller's own context error
// unchanged (a cancelled run is not a provider failure).
func classifyTransport(parent, attempt context.Context, s *settings, what string, err error) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	switch context.Cause(attempt) {
	case errFirstByte:
		return &provider.Error{Class: provider.ErrTimeout, Message: fmt.Sprintf("no response from %s within %s", s.baseURL, s.firstByte)}
	case errStreamTimeout:
		return &provider.Error{Class: provider.ErrTimeout, Message: fmt.Sprintf("%s: the answer took longer than timeout %s", what, s.timeout)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &provider.Error{Class: provider.ErrTimeout, Message: fmt.Sprintf("%s: %v", what, err)}
	}
	return &provider.Error{Class: provider.ErrServer, Message: fmt.Sprintf("%s: %v", what, err)}
}

// streamEndedEarly is the error for a stream that stopped before the
// server said it was done.
func streamEndedEarly(detail string) *provider.Error {
	return &provider.Error{Class: provider.ErrServer, Message: "stream ended early: " + detail}
}

// malformed is the error for an event whose data is not the JSON expected.
func malformed(ev sseEvent, err error) *provider.Error {
	return &provider.Error{Class: provider.ErrServer,
		Message: fmt.Sprintf("malformed stream data at line %d: %v: %q", ev.Line, err, snippet(ev.Data))}
}
