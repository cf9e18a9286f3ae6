package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// apiError is the API's error object.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// classify maps an API error to a protocol error class.
func (e *apiError) classify(status int, retryAfter time.Duration) *provider.Error {
	out := &provider.Error{Message: e.Message, HTTPStatus: status, RetryAfter: retryAfter}
	switch {
	case e.Type == "rate_limit_error" || status == http.StatusTooManyRequests:
		out.Class = provider.ErrRateLimited
	case e.Type == "overloaded_error" || status == 529:
		out.Class = provider.ErrOverloaded
	case e.Type == "authentication_error" || e.Type == "permission_error" || status == 401 || status == 403:
		out.Class = provider.ErrAuth
	case e.Type == "request_too_large" || status == 413 || strings.Contains(strings.ToLower(e.Message), "prompt is too long"):
		out.Class = provider.ErrContextTooLong
	case e.Type == "invalid_request_error" || e.Type == "not_found_error" || (status >= 400 && status < 500):
		out.Class = provider.ErrBadRequest
	default:
		out.Class = provider.ErrServer
	}
	if out.Message == "" {
		out.Message = e.Type
	}
	return out
}

// httpError reads a non-200 response into a classified error.
func httpError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var wrapped struct {
		Error apiError `json:"error"`
	}
	e := &apiError{Message: strings.TrimSpace(string(body))}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Error.Type != "" {
		e = &wrapped.Error
	}
	if e.Message == "" {
		e.Message = resp.Status
	}
	return e.classify(resp.StatusCode, retryAfter(resp.Header, time.Now()))
}

// retryAfter reads retry-after (seconds) or the earliest
// anthropic-ratelimit-*-reset timestamp.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after"); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	var best time.Duration
	for name, vals := range h {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "anthropic-ratelimit-") || !strings.HasSuffix(lower, "-reset") || len(vals) == 0 {
			continue
		}
		if t, err := time.Parse(time.RFC3339, vals[0]); err == nil {
			if d := t.Sub(now); d > 0 && (best == 0 || d < best) {
				best = d
			}
		}
	}
	return best
}

// transportError classifies a failure to talk to the API at all.
func transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &provider.Error{Class: provider.ErrTimeout, Message: err.Error()}
	}
	return &provider.Error{Class: provider.ErrServer, Message: err.Error()}
}
