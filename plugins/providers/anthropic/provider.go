// Package anthropic is the provider for Anthropic's Messages API: streamed
// text, extended thinking (with signatures sent back verbatim), tool use
// with input_json_delta, prompt caching and usage including cache tokens.
// Failures map to the protocol's error classes; transient ones are retried
// with jittered backoff, but only before anything has streamed.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Defaults of the configuration block.
const (
	defaultBaseURL   = "https://api.anthropic.com"
	defaultVersion   = "2023-06-01"
	defaultTimeout   = "10m"
	defaultRetries   = 3
	defaultMaxTokens = 8192
	apiKeyEnv        = "ANTHROPIC_API_KEY"
	userAgent        = "sparrow-provider-anthropic/0.1.0"
)

// Anthropic is the provider component. The zero value is not usable; call
// New.
type Anthropic struct {
	mu  sync.Mutex
	cfg settings

	client *http.Client
	// sleep waits between retries, returning early with ctx's error.
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a random duration in [0, ceil].
	jitter func(ceil time.Duration) time.Duration
	getenv func(string) string
	now    func() time.Time
}

// settings is the decoded configuration block.
type settings struct {
	BaseURL          string   `json:"base_url"`
	APIKey           string   `json:"api_key"`
	AnthropicVersion string   `json:"anthropic_version"`
	Beta             []string `json:"beta"`
	Timeout          string   `json:"timeout"`
	MaxRetries       float64  `json:"max_retries"`
	MaxTokens        float64  `json:"max_tokens"`
	Models           []string `json:"models"`
	PromptCaching    *bool    `json:"prompt_caching"`

	timeout time.Duration
}

func (s settings) caching() bool { return s.PromptCaching == nil || *s.PromptCaching }

// New returns the provider with default settings; Configure adjusts them.
func New() *Anthropic {
	timeout, _ := time.ParseDuration(defaultTimeout)
	return &Anthropic{
		cfg: settings{BaseURL: defaultBaseURL, AnthropicVersion: defaultVersion, Timeout: defaultTimeout,
			MaxRetries: defaultRetries, MaxTokens: defaultMaxTokens, timeout: timeout},
		client: &http.Client{},
		sleep:  sleepCtx,
		jitter: func(ceil time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(ceil) + 1)) },
		getenv: os.Getenv,
		now:    time.Now,
	}
}

// Name implements provider.Provider.
func (*Anthropic) Name() string { return "anthropic" }

// Description implements plugin.Describer.
func (*Anthropic) Description() string {
	return "Anthropic Messages API: streaming, tool use, extended thinking, prompt caching"
}

// ConfigSchema implements plugin.Configurable.
func (*Anthropic) ConfigSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "base_url", Type: plugin.String, Default: defaultBaseURL, Description: "API root, without /v1"},
		{Name: "api_key", Type: plugin.String, Sensitive: true, Description: "API key; $" + apiKeyEnv + " when unset"},
		{Name: "anthropic_version", Type: plugin.String, Default: defaultVersion, Description: "anthropic-version header"},
		{Name: "beta", Type: plugin.ListOfString, Description: "anthropic-beta flags sent with every request"},
		{Name: "timeout", Type: plugin.Duration, Default: defaultTimeout, Description: "bound on one request, streaming included"},
		{Name: "max_retries", Type: plugin.Number, Default: defaultRetries, Description: "retries of transient failures before anything streamed"},
		{Name: "max_tokens", Type: plugin.Number, Default: defaultMaxTokens, Description: "max_tokens when a request sets none"},
		{Name: "models", Type: plugin.ListOfString, Description: "extra model ids to offer besides the API's list"},
		{Name: "prompt_caching", Type: plugin.Bool, Default: true, Description: "mark the system prompt and latest turns with cache_control"},
	}}
}

// Configure implements plugin.Configurable. It validates every value and
// leaves the previous configuration in place when one is wrong.
func (a *Anthropic) Configure(_ context.Context, c plugin.Config) error {
	cfg := a.settings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	a.mu.Lock()
	a.cfg = cfg
	a.mu.Unlock()
	return nil
}

// validate checks the settings and fills the derived fields.
func (s *settings) validate() error {
	s.BaseURL = strings.TrimRight(s.BaseURL, "/")
	if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base_url %q: want an http(s) URL", s.BaseURL)
	}
	d, err := time.ParseDuration(s.Timeout)
	if err != nil || d <= 0 {
		return fmt.Errorf("timeout %q: want a positive duration such as \"10m\"", s.Timeout)
	}
	s.timeout = d
	if s.MaxRetries < 0 || s.MaxRetries != math.Trunc(s.MaxRetries) || s.MaxRetries > 100 {
		return fmt.Errorf("max_retries %v: want a whole number from 0 to 100", s.MaxRetries)
	}
	if s.MaxTokens < 1 || s.MaxTokens != math.Trunc(s.MaxTokens) {
		return fmt.Errorf("max_tokens %v: want a whole number ≥ 1", s.MaxTokens)
	}
	if s.AnthropicVersion == "" {
		return errors.New("anthropic_version: must not be empty")
	}
	return nil
}

func (a *Anthropic) settings() settings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// key is the configured API key, else the environment's.
func (a *Anthropic) key(cfg settings) string {
	if cfg.APIKey != "" {
		return cfg.APIKey
	}
	return a.getenv(apiKeyEnv)
}

// Chat implements provider.Provider. It streams one Messages API answer,
// retrying transient failures that happen before the first event.
func (a *Anthropic) Chat(ctx context.Context, req provider.Request, send func(provider.Event) error) error {
	cfg := a.settings()
	key := a.key(cfg)
	if key == "" {
		return &provider.Error{Class: provider.ErrAuth,
			Message: "no API key: set " + apiKeyEnv + " or api_key in the provider \"anthropic\" block"}
	}
	body, err := buildRequest(req, requestOptions{
		defaultMaxTokens: int64(cfg.MaxTokens),
		caching:          cfg.caching(),
	})
	if err != nil {
		return &provider.Error{Class: provider.ErrBadRequest, Message: err.Error()}
	}
	return a.retry(ctx, int(cfg.MaxRetries), send, func(ctx context.Context, send func(provider.Event) error) error {
		return a.stream(ctx, cfg, key, body, send)
	})
}

var (
	_ provider.Provider   = (*Anthropic)(nil)
	_ plugin.Configurable = (*Anthropic)(nil)
	_ plugin.Describer    = (*Anthropic)(nil)
)
