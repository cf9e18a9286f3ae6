package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func TestRateLimitedThenSuccess(t *testing.T) {
	f := newFake(t,
		jsonError(429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-4.1", map[string]string{"Retry-After": "2"}),
		sseChunks(chunk(`{"content":"ok"}`, "stop")),
	)
	p, sl := testProvider(t, OpenAI, f, nil)
	got, err := chat(t, p, provider.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Text != "ok" {
		t.Errorf("events = %+v", got)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// Retry-After (2s) beats the first backoff ceiling (500ms).
	if d := cmp.Diff([]time.Duration{2 * time.Second}, sl.got()); d != "" {
		t.Errorf("sleeps (-want +got):\n%s", d)
	}
}

func TestAuthIsNotRetried(t *testing.T) {
	f := newFake(t, jsonError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-test.", nil))
	p, sl := testProvider(t, OpenAI, f, nil)
	_, err := chat(t, p, provider.Request{})
	perr := asError(t, err)
	if perr.Class != provider.ErrAuth || perr.HTTPStatus != 401 || !strings.Contains(perr.Message, "Incorrect API key") {
		t.Errorf("error = %#v", perr)
	}
	if len(f.requests()) != 1 || len(sl.got()) != 0 {
		t.Errorf("%d requests, %d sleeps; want 1, 0", len(f.requests()), len(sl.got()))
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	f := newFake(t, jsonError(500, "server_error", "", "The server had an error while processing your request.", nil))
	p, sl := testProvider(t, OpenAI, f, map[string]any{"max_retries": 3})
	_, err := chat(t, p, provider.Request{})
	perr := asError(t, err)
	if perr.Class != provider.ErrServer || perr.HTTPStatus != 500 || !strings.Contains(perr.Message, "server had an error") {
		t.Errorf("error = %#v", perr)
	}
	if n := len(f.requests()); n != 4 {
		t.Errorf("%d requests, want 4 (1 + max_retries)", n)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if d := cmp.Diff(want, sl.got()); d != "" {
		t.Errorf("backoff ceilings (-want +got):\n%s", d)
	}
}

func TestContextTooLong(t *testing.T) {
	f := newFake(t, jsonError(400, "invalid_request_error", "context_length_exceeded",
		"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", nil))
	p, sl := testProvider(t, OpenAI, f, nil)
	_, err := chat(t, p, provider.Request{})
	if perr := asError(t, err); perr.Class != provider.ErrContextTooLong || !strings.Contains(perr.Message, "maximum context length") {
		t.Errorf("error = %#v", perr)
	}
	if len(sl.got()) != 0 {
		t.Error("context_too_long was retried")
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t, jsonError(503, "server_error", "", "The engine is currently overloaded.", nil))
	p, err := New(OpenAI, WithGetenv(func(string) string { return "sk" }),
		WithJitter(func(d time.Duration) time.Duration { return d }))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Configure(t.Context(), configValues(t, map[string]any{"base_url": f.URL()})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = p.Chat(ctx, provider.Request{Model: "gpt-4.1"}, func(provider.Event) error { return nil })
	if err != context.DeadlineExceeded || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %v, want the context's error promptly", err, time.Since(start))
	}
}

func TestBackoffCeiling(t *testing.T) {
	p, _ := New(OpenAI, WithJitter(func(d time.Duration) time.Duration { return d }))
	for n, want := range map[int]time.Duration{0: 500 * time.Millisecond, 1: time.Second, 5: 16 * time.Second,
		6: 20 * time.Second, 40: 20 * time.Second} {
		if got := p.backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
	real, _ := New(OpenAI)
	for range 100 {
		if d := real.backoff(2); d < 0 || d >= 2*time.Second {
			t.Fatalf("jittered backoff(2) = %v", d)
		}
	}
}

func TestClassifyHTTP(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status int
		header map[string]string
		body   string
		class  provider.ErrorClass
		after  time.Duration
		msg    string
	}{
		{429, map[string]string{"Retry-After": "Sun, 01 Jun 2025 12:00:07 GMT"}, `{"error":{"message":"slow"}}`, provider.ErrRateLimited, 7 * time.Second, "slow"},
		{429, map[string]string{"Retry-After-Ms": "1500"}, ``, provider.ErrRateLimited, 1500 * time.Millisecond, "Too Many Requests"},
		{429, map[string]string{"X-Ratelimit-Reset-Requests": "6m0s", "X-Ratelimit-Reset-Tokens": "20ms",
			"X-Ratelimit-Remaining-Tokens": "0"}, `{}`, provider.ErrRateLimited, 20 * time.Millisecond, ""},
		{429, map[string]string{"X-Ratelimit-Reset-Requests": "1.5s"}, `{}`, provider.ErrRateLimited, 1500 * time.Millisecond, ""},
		{429, nil, `{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`, provider.ErrRateLimited, 0, "insufficient_quota"},
		{529, nil, `{"error":{"message":"Overloaded"}}`, provider.ErrOverloaded, 0, "Overloaded"},
		{503, nil, `upstream connect error`, provider.ErrOverloaded, 0, "upstream connect error"},
		{502, nil, `<html>bad gateway</html>`, provider.ErrServer, 0, "bad gateway"},
		{500, nil, `{"error":{"message":"The server is overloaded"}}`, provider.ErrOverloaded, 0, "overloaded"},
		{403, nil, `{"error":"forbidden region"}`, provider.ErrAuth, 0, "forbidden region"},
		{404, nil, `{"error":{"message":"The model 'x' does not exist","code":"model_not_found"}}`, provider.ErrBadRequest, 0, "model_not_found"},
		{400, nil, `{"error":{"message":"blocked","code":"content_filter"}}`, provider.ErrRefusal, 0, "blocked"},
		{400, nil, `{"object":"error","message":"This model's maximum context length is 4096 tokens","code":400}`, provider.ErrContextTooLong, 0, "4096"},
		{422, nil, `{"detail":"bad field"}`, provider.ErrBadRequest, 0, "bad field"},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
		for k, v := range tc.header {
			resp.Header.Set(k, v)
		}
		e := classifyHTTP(resp, []byte(tc.body), now)
		if e.Class != tc.class || e.RetryAfter != tc.after || !strings.Contains(e.Message, tc.msg) || e.HTTPStatus != tc.status {
			t.Errorf("%d %s: got %#v", tc.status, tc.body, e)
		}
	}
	if retryable(&provider.Error{Class: provider.ErrRateLimited, Message: "quota [insufficient_quota]"}) {
		t.Error("an exhausted quota is retried")
	}
	if retryable(&provider.Error{Class: provider.ErrRateLimited, RetryAfter: time.Hour}) {
		t.Error("an hour's Retry-After is waited out")
	}
}

func TestConnectionRefusedIsServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v1"
	srv.Close()
	p, sl := testProvider(t, OpenAICompatible, nil, map[string]any{"base_url": url, "max_retries": 1})
	_, err := chat(t, p, provider.Request{Model: "m"})
	if perr := asError(t, err); perr.Class != provider.ErrServer {
		t.Errorf("error = %v", perr)
	}
	if len(sl.got()) != 1 {
		t.Errorf("%d sleeps, want 1", len(sl.got()))
	}
}
