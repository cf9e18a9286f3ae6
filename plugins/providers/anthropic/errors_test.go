package anthropic

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func TestHTTPErrors(t *testing.T) {
	ok := events(evStart, evTextOpen, textDelta(0, "ok"), blockStop(0), evEndTurn, evStop)
	cases := []struct {
		name     string
		handlers []http.HandlerFunc
		class    provider.ErrorClass // "" for success
		requests int
		slept    []time.Duration
		message  string
	}{{
		name:     "429 with retry-after, then success",
		handlers: []http.HandlerFunc{apiErr(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "retry-after", "7"), ok},
		requests: 2, slept: []time.Duration{7 * time.Second},
	}, {
		name:     "529 overloaded, retries exhausted with backoff",
		handlers: []http.HandlerFunc{apiErr(529, "overloaded_error", "Overloaded")},
		class:    provider.ErrOverloaded, requests: 3, slept: []time.Duration{500 * time.Millisecond, time.Second},
		message: "overloaded_error: Overloaded (request-id req_err) (gave up after 3 attempts)",
	}, {
		name:     "401 not retried",
		handlers: []http.HandlerFunc{apiErr(401, "authentication_error", "invalid x-api-key")},
		class:    provider.ErrAuth, requests: 1, message: "authentication_error: invalid x-api-key (request-id req_err)",
	}, {
		name:     "403 permission",
		handlers: []http.HandlerFunc{apiErr(403, "permission_error", "no access to model")},
		class:    provider.ErrAuth, requests: 1,
	}, {
		name:     "400 prompt too long",
		handlers: []http.HandlerFunc{apiErr(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum")},
		class:    provider.ErrContextTooLong, requests: 1,
		message: "invalid_request_error: prompt is too long: 208310 tokens > 200000 maximum (request-id req_err)",
	}, {
		name:     "400 other",
		handlers: []http.HandlerFunc{apiErr(400, "invalid_request_error", "messages.1.content.0: unexpected tool_use_id")},
		class:    provider.ErrBadRequest, requests: 1,
	}, {
		name:     "413 request too large",
		handlers: []http.HandlerFunc{apiErr(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")},
		class:    provider.ErrContextTooLong, requests: 1,
	}, {
		name:     "500 then 503 then success",
		handlers: []http.HandlerFunc{apiErr(500, "api_error", "Internal server error"), apiErr(503, "api_error", "unavailable"), ok},
		requests: 3, slept: []time.Duration{500 * time.Millisecond, time.Second},
	}, {
		name: "502 from a proxy, not JSON",
		handlers: []http.HandlerFunc{func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html>bad gateway</html>"))
		}},
		class: provider.ErrServer, requests: 3, slept: []time.Duration{500 * time.Millisecond, time.Second},
		message: "<html>bad gateway</html> (gave up after 3 attempts)",
	}, {
		name:     "429 asking for a long pause goes back to the router",
		handlers: []http.HandlerFunc{apiErr(429, "rate_limit_error", "slow down", "retry-after", "600")},
		class:    provider.ErrRateLimited, requests: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, tc.handlers...)
			_, err := h.chat(hello())
			var perr *provider.Error
			switch {
			case tc.class == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.class != "" && (!errors.As(err, &perr) || perr.Class != tc.class):
				t.Fatalf("err = %v, want class %s", err, tc.class)
			case tc.message != "" && perr.Message != tc.message:
				t.Errorf("message = %q, want %q", perr.Message, tc.message)
			}
			if n := len(h.fake.requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if !equalDurations(h.slept, tc.slept) {
				t.Errorf("slept %v, want %v", h.slept, tc.slept)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestErrorCarriesStatusAndHint(t *testing.T) {
	h := newHarness(t, map[string]any{"max_retries": 0},
		apiErr(429, "rate_limit_error", "slow down", "retry-after", "2"))
	_, err := h.chat(hello())
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.HTTPStatus != 429 || perr.RetryAfter != 2*time.Second {
		t.Fatalf("err = %#v", err)
	}
	if got := perr.Error(); got != "rate_limited (HTTP 429): rate_limit_error: slow down (request-id req_err)" {
		t.Errorf("Error() = %q", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	cases := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"retry-after wins over resets", map[string]string{"Retry-After": "3", "Anthropic-Ratelimit-Requests-Reset": at(40 * time.Second)}, 3 * time.Second},
		{"exhausted limit decides", map[string]string{
			"Anthropic-Ratelimit-Requests-Reset":         at(50 * time.Second),
			"Anthropic-Ratelimit-Requests-Remaining":     "12",
			"Anthropic-Ratelimit-Input-Tokens-Reset":     at(8 * time.Second),
			"Anthropic-Ratelimit-Input-Tokens-Remaining": "0",
		}, 8 * time.Second},
		{"latest reset otherwise", map[string]string{
			"Anthropic-Ratelimit-Requests-Reset": at(5 * time.Second),
			"Anthropic-Ratelimit-Tokens-Reset":   at(9 * time.Second),
		}, 9 * time.Second},
		{"past reset and garbage ignored", map[string]string{
			"Anthropic-Ratelimit-Requests-Reset": at(-5 * time.Second),
			"Anthropic-Ratelimit-Tokens-Reset":   "soon",
			"Retry-After":                        "later",
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tc.want {
				t.Errorf("retryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		typ, msg string
		status   int
		want     provider.ErrorClass
	}{
		{"rate_limit_error", "", 429, provider.ErrRateLimited},
		{"overloaded_error", "", 529, provider.ErrOverloaded},
		{"overloaded_error", "", 0, provider.ErrOverloaded}, // mid-stream
		{"api_error", "", 500, provider.ErrServer},
		{"", "", 502, provider.ErrServer},
		{"", "", 503, provider.ErrServer},
		{"", "", 504, provider.ErrTimeout},
		{"timeout_error", "", 0, provider.ErrTimeout},
		{"authentication_error", "", 401, provider.ErrAuth},
		{"permission_error", "", 403, provider.ErrAuth},
		{"billing_error", "", 400, provider.ErrAuth},
		{"invalid_request_error", "prompt is too long: 1 tokens > 0 maximum", 400, provider.ErrContextTooLong},
		{"invalid_request_error", "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000", 400, provider.ErrContextTooLong},
		{"invalid_request_error", "temperature: out of range", 400, provider.ErrBadRequest},
		{"not_found_error", "model: claude-9", 404, provider.ErrBadRequest},
		{"request_too_large", "", 413, provider.ErrContextTooLong},
		{"", "", 413, provider.ErrContextTooLong},
		{"", "", 418, provider.ErrBadRequest},
	}
	for _, tc := range cases {
		if got := (apiError{Type: tc.typ, Message: tc.msg}).class(tc.status); got != tc.want {
			t.Errorf("class(%q, %q, %d) = %s, want %s", tc.typ, tc.msg, tc.status, got, tc.want)
		}
	}
}

func TestConnectionRefusedIsServer(t *testing.T) {
	h := newHarness(t, map[string]any{"max_retries": 1}, events(evStart, evStop))
	h.fake.srv.Close()
	_, err := h.chat(hello())
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrServer || !strings.Contains(perr.Message, "connection failed") {
		t.Fatalf("err = %v", err)
	}
	if len(h.slept) != 1 {
		t.Errorf("slept %v, want one backoff", h.slept)
	}
}
