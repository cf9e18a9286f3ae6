package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// statusOverloaded is Anthropic's "overloaded" status code.
const statusOverloaded = 529

// apiError is the API's error object, as in
// {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// class maps an API error type and HTTP status (zero mid-stream) to a
// protocol error class. The type decides when it is known; the status
// decides otherwise.
func (e apiError) class(status int) provider.ErrorClass {
	switch e.Type {
	case "rate_limit_error":
		return provider.ErrRateLimited
	case "overloaded_error":
		return provider.ErrOverloaded
	case "authentication_error", "permission_error", "billing_error":
		return provider.ErrAuth
	case "request_too_large":
		return provider.ErrContextTooLong
	case "timeout_error":
		return provider.ErrTimeout
	case "api_error":
		return provider.ErrServer
	case "invalid_request_error", "not_found_error":
		if e.tooLong() {
			return provider.ErrContextTooLong
		}
		return provider.ErrBadRequest
	}
	return statusClass(status, e.tooLong())
}

// tooLong reports whether a 400's message says the prompt does not fit
// the model's context window.
func (e apiError) tooLong() bool {
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit") ||
		strings.Contains(msg, "context window")
}

// statusClass classifies by HTTP status alone.
func statusClass(status int, tooLong bool) provider.ErrorClass {
	switch {
	case status == http.StatusTooManyRequests:
		return provider.ErrRateLimited
	case status == statusOverloaded:
		return provider.ErrOverloaded
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusPaymentRequired:
		return provider.ErrAuth
	case status == http.StatusRequestEntityTooLarge || (status == http.StatusBadRequest && tooLong):
		return provider.ErrContextTooLong
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return provider.ErrTimeout
	case status >= 400 && status < 500:
		return provider.ErrBadRequest
	}
	return provider.ErrServer
}

// httpError reads a non-200 response into a classified error carrying the
// vendor's message, its request id and its retry hint.
func httpError(resp *http.Response, now time.Time) *provider.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var wrapped struct {
		Error apiError `json:"error"`
	}
	e := apiError{Message: strings.TrimSpace(string(body))}
	if json.Unmarshal(body, &wrapped) == nil && (wrapped.Error.Type != "" || wrapped.Error.Message != "") {
		e = wrapped.Error
	}
	msg := e.Message
	if msg == "" {
		msg = resp.Status
	}
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	if id := resp.Header.Get("request-id"); id != "" {
		msg += " (request-id " + id + ")"
	}
	return &provider.Error{Class: e.class(resp.StatusCode), Message: msg, HTTPStatus: resp.StatusCode,
		RetryAfter: retryAfter(resp.Header, now)}
}

// streamError is an error event received mid-stream.
func streamError(e *apiError) *provider.Error {
	if e == nil {
		return &provider.Error{Class: provider.ErrServer, Message: "error event without detail"}
	}
	msg := e.Message
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	return &provider.Error{Class: e.class(0), Message: "mid-stream " + msg}
}

// retryAfter reads the vendor's hint: retry-after (seconds or an HTTP
// date), else the anthropic-ratelimit-*-reset timestamps (RFC 3339). Of
// those, the limits that are exhausted (their -remaining is 0) decide;
// when none is, the latest reset does.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
			return time.Duration(secs * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	var exhausted, latest time.Duration
	for name, vals := range h {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "anthropic-ratelimit-") || !strings.HasSuffix(lower, "-reset") || len(vals) == 0 {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(vals[0]))
		if err != nil || !t.After(now) {
			continue
		}
		d := t.Sub(now)
		latest = max(latest, d)
		if strings.TrimSpace(h.Get(strings.TrimSuffix(lower, "-reset")+"-remaining")) == "0" {
			exhausted = max(exhausted, d)
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return latest
}

// transportError classifies a failure to talk to the API at all, or a
// stream that broke. attemptCtx is parent bounded by limit, the
// configured timeout. Cancellation by the caller is returned as parent's
// own error, unclassified: nobody should retry or fall back on it.
func transportError(parent, attemptCtx context.Context, limit time.Duration, err error) error {
	if parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded) {
		return parent.Err()
	}
	var ne net.Error
	if attemptCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &provider.Error{Class: provider.ErrTimeout, Message: fmt.Sprintf("no complete answer within %s: %v", limit, err)}
	}
	return &provider.Error{Class: provider.ErrServer, Message: fmt.Sprintf("connection failed: %v", err)}
}
