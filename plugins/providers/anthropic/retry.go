package anthropic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Backoff between retries: full jitter over an exponential ceiling.
const (
	backoffBase = 500 * time.Millisecond
	backoffCap  = 20 * time.Second
	// maxRetryAfter is the longest vendor hint waited out here; a longer
	// one goes back to the router at once, which may fall back to another
	// model rather than stall the run.
	maxRetryAfter = 60 * time.Second
)

// retry runs attempt until it succeeds, fails for good, or maxRetries
// retries are spent. A failure is retried only when its class is
// transient and the attempt has not streamed any event, so output is
// never duplicated. Cancellation of ctx ends a wait at once.
func (a *Anthropic) retry(ctx context.Context, maxRetries int, send func(provider.Event) error,
	attempt func(context.Context, func(provider.Event) error) error) error {
	for n := 0; ; n++ {
		sent := false
		err := attempt(ctx, func(e provider.Event) error {
			sent = true
			return send(e)
		})
		if err == nil || sent || ctx.Err() != nil {
			return err
		}
		var perr *provider.Error
		if !errors.As(err, &perr) || !retryable(perr) {
			return err
		}
		if n >= maxRetries {
			if n > 0 {
				perr.Message = fmt.Sprintf("%s (gave up after %d attempts)", perr.Message, n+1)
			}
			return perr
		}
		if err := a.sleep(ctx, max(a.backoff(n), perr.RetryAfter)); err != nil {
			return err
		}
	}
}

// retryable reports whether waiting here may help: the class is
// transient and the vendor did not ask for a long pause.
func retryable(e *provider.Error) bool {
	return e.Class.Retryable() && e.RetryAfter <= maxRetryAfter
}

// backoff returns the wait before retry n (0-based): a random duration up
// to min(cap, base·2ⁿ).
func (a *Anthropic) backoff(n int) time.Duration {
	ceil := backoffCap
	if n < 16 {
		ceil = min(backoffCap, backoffBase<<n)
	}
	return a.jitter(ceil)
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
