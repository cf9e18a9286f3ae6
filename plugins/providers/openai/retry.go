package openai

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Backoff between retries: full jitter over an exponential ceiling.
const (
	backoffBase = 500 * time.Millisecond
	backoffCap  = 20 * time.Second
	// maxRetryAfter is the longest server hint waited out here; a longer
	// one is returned to the router, which may fall back to another model.
	maxRetryAfter = 60 * time.Second
)

// retry runs attempt until it succeeds, fails for good, or maxRetries
// retries are spent. A failure is retried only when its class is
// transient and the attempt has not streamed any event yet, so output is
// never duplicated. ctx cancellation ends the wait at once.
func (p *Provider) retry(ctx context.Context, maxRetries int, send func(provider.Event) error,
	attempt func(context.Context, func(provider.Event) error) error) error {
	for n := 0; ; n++ {
		sent := false
		err := attempt(ctx, func(e provider.Event) error {
			sent = true
			return send(e)
		})
		if err == nil || sent || n >= maxRetries || ctx.Err() != nil {
			return err
		}
		var perr *provider.Error
		if !errors.As(err, &perr) || !retryable(perr) {
			return err
		}
		wait := p.backoff(n)
		if perr.RetryAfter > wait {
			wait = perr.RetryAfter
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// retryable reports whether waiting may help: the class is transient and
// it is not an exhausted quota, which only billing fixes.
func retryable(e *provider.Error) bool {
	if !e.Class.Retryable() || e.RetryAfter > maxRetryAfter {
		return false
	}
	return !strings.Contains(e.Message, "insufficient_quota")
}

// backoff returns the wait before retry n (0-based): a random duration up
// to min(cap, base·2ⁿ).
func (p *Provider) backoff(n int) time.Duration {
	ceil := backoffCap
	if n < 16 {
		ceil = min(backoffCap, backoffBase<<n)
	}
	return p.jitter(ceil)
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
