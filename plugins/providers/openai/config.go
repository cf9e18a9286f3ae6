package openai

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// APIs a component can speak.
const (
	apiChat      = "chat"
	apiResponses = "responses"
)

// config is a component's configuration from its HCL block.
type config struct {
	// baseURL is the API base without a trailing slash; empty for the
	// preset's default.
	baseURL string
	// apiKey is empty to read the preset's environment variable.
	apiKey       string
	api          string
	organization string
	headers      map[string]string
	// timeout bounds one whole streamed answer.
	timeout    time.Duration
	maxRetries int
	// models are extra model ids to advertise.
	models []string
}

// ConfigSchema implements plugin.Configurable.
func (p *Provider) ConfigSchema() plugin.Schema {
	base := plugin.Attribute{Name: "base_url", Type: plugin.String,
		Description: "API base URL, ending in /v1 (default " + p.preset.baseURL + ")"}
	if p.preset.baseURL == "" {
		base.Required, base.Description = true, "API base URL of the server, e.g. http://127.0.0.1:8080/v1"
	}
	key := "API key (Authorization: Bearer)"
	if p.preset.keyEnv != "" {
		key += "; default $" + p.preset.keyEnv
	}
	api := "API to use: chat (Chat Completions)"
	if p.preset.name == OpenAI {
		api += " or responses (Responses API)"
	}
	return plugin.Schema{Attributes: []plugin.Attribute{
		base,
		{Name: "api_key", Type: plugin.String, Sensitive: true, Description: key},
		{Name: "api", Type: plugin.String, Default: apiChat, Description: api},
		{Name: "organization", Type: plugin.String, Description: "OpenAI-Organization header"},
		{Name: "headers", Type: plugin.MapOfString, Description: "extra HTTP headers sent with every request"},
		{Name: "timeout", Type: plugin.Duration, Default: "10m",
			Description: "limit on one whole streamed answer (connecting and the first byte are limited to 30s)"},
		{Name: "max_retries", Type: plugin.Number, Default: defaultMaxRetries,
			Description: "retries of rate-limited, overloaded, failed or timed-out requests before anything was streamed"},
		{Name: "models", Type: plugin.ListOfString, Description: "extra model ids to advertise"},
	}}
}

// Configure implements plugin.Configurable. Every problem is reported at
// once, each naming its attribute.
func (p *Provider) Configure(_ context.Context, c plugin.Config) error {
	var raw struct {
		BaseURL      string            `json:"base_url"`
		APIKey       string            `json:"api_key"`
		API          string            `json:"api"`
		Organization string            `json:"organization"`
		Headers      map[string]string `json:"headers"`
		Timeout      string            `json:"timeout"`
		MaxRetries   *float64          `json:"max_retries"`
		Models       []string          `json:"models"`
	}
	if err := c.Decode(&raw); err != nil {
		return fmt.Errorf("%s: configuration: %w", p.preset.name, err)
	}
	cfg := config{apiKey: strings.TrimSpace(raw.APIKey), organization: raw.Organization,
		headers: raw.Headers, models: raw.Models, timeout: defaultTimeout, maxRetries: defaultMaxRetries}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var err error
	if cfg.baseURL, err = p.parseBaseURL(raw.BaseURL); err != nil {
		add("base_url: %v", err)
	}
	switch cfg.api = raw.API; cfg.api {
	case "":
		cfg.api = apiChat
	case apiChat:
	case apiResponses:
		if p.preset.name != OpenAI {
			add("api: %q is only available on the openai component; use \"chat\"", raw.API)
		}
	default:
		add("api: %q is not one of \"chat\", \"responses\"", raw.API)
	}
	if raw.Timeout != "" {
		if cfg.timeout, err = time.ParseDuration(raw.Timeout); err != nil || cfg.timeout <= 0 {
			add("timeout: %q is not a positive duration such as \"10m\"", raw.Timeout)
		}
	}
	if r := raw.MaxRetries; r != nil {
		if *r < 0 || *r > 20 || *r != math.Trunc(*r) {
			add("max_retries: %v is not a whole number from 0 to 20", *r)
		}
		cfg.maxRetries = int(*r)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", p.preset.name, strings.Join(problems, "; "))
	}
	p.mu.Lock()
	p.cfg = cfg
	p.mu.Unlock()
	return nil
}

// parseBaseURL checks a configured base URL; empty keeps the preset's.
func (p *Provider) parseBaseURL(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		if p.preset.baseURL == "" {
			return "", fmt.Errorf("required by the %s component", p.preset.name)
		}
		return "", nil
	}
	if p.preset.name == Ollama {
		v = ollamaBase(v)
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", v)
	}
	return strings.TrimSuffix(v, "/"), nil
}
