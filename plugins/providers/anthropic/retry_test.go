package anthropic

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func TestBackoffCeilings(t *testing.T) {
	a := New()
	a.jitter = func(ceil time.Duration) time.Duration { return ceil }
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 20 * time.Second, 20 * time.Second}
	for n, w := range want {
		if got := a.backoff(n); got != w {
			t.Errorf("backoff(%d) = %v, want %v", n, got, w)
		}
	}
	if got := a.backoff(70); got != backoffCap {
		t.Errorf("backoff(70) = %v, want the cap", got)
	}
}

func TestBackoffFullJitter(t *testing.T) {
	a := New()
	for n := range 8 {
		ceil := min(backoffCap, backoffBase<<n)
		for range 50 {
			if d := a.backoff(n); d < 0 || d > ceil {
				t.Fatalf("backoff(%d) = %v, outside [0, %v]", n, d, ceil)
			}
		}
	}
}

// TestRetryHonoursHint: the vendor's hint wins over a shorter backoff.
func TestRetryHonoursHint(t *testing.T) {
	a := New()
	a.jitter = func(time.Duration) time.Duration { return 0 }
	var slept []time.Duration
	a.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	calls := 0
	err := a.retry(context.Background(), 3, func(provider.Event) error { return nil },
		func(context.Context, func(provider.Event) error) error {
			calls++
			if calls < 3 {
				return &provider.Error{Class: provider.ErrRateLimited, RetryAfter: 1500 * time.Millisecond}
			}
			return nil
		})
	if err != nil || calls != 3 || len(slept) != 2 || slept[0] != 1500*time.Millisecond {
		t.Fatalf("err %v, %d calls, slept %v", err, calls, slept)
	}
}

// TestRetryCancelDuringBackoff: cancelling while waiting returns at once.
func TestRetryCancelDuringBackoff(t *testing.T) {
	a := New()
	a.jitter = func(time.Duration) time.Duration { return time.Hour }
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan error, 1)
	go func() {
		done <- a.retry(ctx, 3, func(provider.Event) error { return nil },
			func(context.Context, func(provider.Event) error) error {
				calls++
				return &provider.Error{Class: provider.ErrOverloaded, Message: "busy"}
			})
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || calls != 1 {
			t.Fatalf("err = %v after %d calls", err, calls)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("backoff ignored cancellation")
	}
}

// TestRetryOnlyBeforeOutput: once an event went out, a transient failure
// is returned as is.
func TestRetryOnlyBeforeOutput(t *testing.T) {
	a := New()
	a.sleep = func(context.Context, time.Duration) error { t.Fatal("slept"); return nil }
	calls := 0
	err := a.retry(context.Background(), 3, func(provider.Event) error { return nil },
		func(_ context.Context, send func(provider.Event) error) error {
			calls++
			_ = send(provider.Event{Text: "par"})
			return &provider.Error{Class: provider.ErrServer, Message: "cut"}
		})
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Message != "cut" || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
}

func TestSleepCtx(t *testing.T) {
	if err := sleepCtx(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("err = %v", err)
	}
}
