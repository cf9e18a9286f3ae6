// Package anthropic is the provider for Anthropic's Messages API: streamed
// text, extended thinking (with signatures sent back verbatim), tool use
// with input_json_delta, and usage including prompt-cache tokens. Failures
// map to the protocol's error classes; transient ones are retried with
// jittered backoff before anything has streamed.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Anthropic is the provider component.
type Anthropic struct {
	mu     sync.Mutex
	cfg    settings
	client *http.Client
	// sleep waits between retries; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	getenv func(string) string
}

type settings struct {
	BaseURL          string   `json:"base_url"`
	APIKey           string   `json:"api_key"`
	AnthropicVersion string   `json:"anthropic_version"`
	Beta             []string `json:"beta"`
	Timeout          string   `json:"timeout"`
	MaxRetries       float64  `json:"max_retries"`
	MaxTokens        float64  `json:"max_tokens"`
	Models           []string `json:"models"`

	timeout time.Duration
}

// New returns the provider with defaults; Configure adjusts it.
func New() *Anthropic {
	return &Anthropic{
		cfg: settings{BaseURL: "https://api.anthropic.com", AnthropicVersion: "2023-06-01", Timeout: "10m",
			MaxRetries: 3, MaxTokens: 8192, timeout: 10 * time.Minute},
		client: &http.Client{},
		sleep:  sleepCtx,
		getenv: os.Getenv,
	}
}

// Name implements provider.Provider.
func (*Anthropic) Name() string { return "anthropic" }

// Description implements plugin.Describer.
func (*Anthropic) Description() string { return "Anthropic Messages API" }

// ConfigSchema implements plugin.Configurable.
func (*Anthropic) ConfigSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "base_url", Type: plugin.String, Default: "https://api.anthropic.com", Description: "API root"},
		{Name: "api_key", Type: plugin.String, Sensitive: true, Description: "defaults to $ANTHROPIC_API_KEY"},
		{Name: "anthropic_version", Type: plugin.String, Default: "2023-06-01"},
		{Name: "beta", Type: plugin.ListOfString, Description: "anthropic-beta flags"},
		{Name: "timeout", Type: plugin.Duration, Default: "10m", Description: "bound on one streamed answer"},
		{Name: "max_retries", Type: plugin.Number, Default: 3},
		{Name: "max_tokens", Type: plugin.Number, Default: 8192, Description: "when a request sets none"},
		{Name: "models", Type: plugin.ListOfString, Description: "extra model ids to offer"},
	}}
}

// Configure implements plugin.Configurable.
func (a *Anthropic) Configure(_ context.Context, c plugin.Config) error {
	cfg := a.settings()
	if err := c.Decode(&cfg); err != nil {
		return err
	}
	d, err := time.ParseDuration(cfg.Timeout)
	if err != nil || d <= 0 {
		return fmt.Errorf("timeout %q: want a positive duration", cfg.Timeout)
	}
	if cfg.MaxRetries < 0 || cfg.MaxTokens < 1 {
		return errors.New("max_retries must be ≥ 0 and max_tokens ≥ 1")
	}
	cfg.timeout = d
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	a.mu.Lock()
	a.cfg = cfg
	a.mu.Unlock()
	return nil
}

func (a *Anthropic) settings() settings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

func (a *Anthropic) key(cfg settings) string {
	if cfg.APIKey != "" {
		return cfg.APIKey
	}
	return a.getenv("ANTHROPIC_API_KEY")
}

// Chat implements provider.Provider.
func (a *Anthropic) Chat(ctx context.Context, req provider.Request, send func(provider.Event) error) error {
	cfg := a.settings()
	if a.key(cfg) == "" {
		return &provider.Error{Class: provider.ErrAuth, Message: "no API key: set ANTHROPIC_API_KEY or api_key in the provider block"}
	}
	body, err := buildRequest(req, int64(cfg.MaxTokens))
	if err != nil {
		return &provider.Error{Class: provider.ErrBadRequest, Message: err.Error()}
	}
	for attempt := 0; ; attempt++ {
		streamed, err := a.attempt(ctx, cfg, body, send)
		var perr *provider.Error
		if err == nil || streamed || !errors.As(err, &perr) || !perr.Class.Retryable() || attempt >= int(cfg.MaxRetries) {
			return err
		}
		if err := a.sleep(ctx, backoff(attempt, perr.RetryAfter)); err != nil {
			return err
		}
	}
}

// backoff is exponential with full jitter (base 500 ms, cap 20 s); a
// vendor's Retry-After wins when it is longer.
func backoff(attempt int, hint time.Duration) time.Duration {
	ceiling := min(500*time.Millisecond<<attempt, 20*time.Second)
	d := time.Duration(rand.Int64N(int64(ceiling) + 1))
	return max(d, hint)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var (
	_ provider.Provider   = (*Anthropic)(nil)
	_ plugin.Configurable = (*Anthropic)(nil)
)
