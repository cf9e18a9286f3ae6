// Package openai is a provider plugin for OpenAI and every server that
// speaks its API: one process serves the "openai" component, a generic
// "openai-compatible" one, and presets for Ollama, LM Studio, vLLM,
// OpenRouter, Groq, DeepSeek and Together.
//
// It streams the Chat Completions API (and, for "openai", optionally the
// Responses API) over plain net/http with its own SSE parser, classifies
// failures into provider.Error classes and retries transient ones before
// anything has been streamed.
package openai

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Component names served by the plugin.
const (
	OpenAI           = "openai"
	OpenAICompatible = "openai-compatible"
	Ollama           = "ollama"
	LMStudio         = "lmstudio"
	VLLM             = "vllm"
	OpenRouter       = "openrouter"
	Groq             = "groq"
	DeepSeek         = "deepseek"
	Together         = "together"
)

// Defaults of the configuration.
const (
	defaultTimeout    = 10 * time.Minute
	defaultFirstByte  = 30 * time.Second
	defaultMaxRetries = 3
	userAgent         = "sparrow-provider-openai/0.1.0"
)

// preset is what distinguishes one component from another.
type preset struct {
	name        string
	description string
	baseURL     string // empty: base_url is required
	keyEnv      string // environment variable holding the API key
	keyRequired bool   // a hosted service: fail early without a key
	headers     map[string]string
}

// presets returns every component's preset, in the manifest's order.
func presets() []preset {
	return []preset{
		{name: OpenAI, description: "OpenAI (api.openai.com): Chat Completions or Responses API",
			baseURL: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY", keyRequired: true},
		{name: OpenAICompatible, description: "any server speaking the OpenAI Chat Completions API (base_url required)"},
		{name: Ollama, description: "a local Ollama server ($OLLAMA_HOST)", baseURL: "http://127.0.0.1:11434/v1"},
		{name: LMStudio, description: "a local LM Studio server", baseURL: "http://127.0.0.1:1234/v1"},
		{name: VLLM, description: "a vLLM OpenAI-compatible server", baseURL: "http://127.0.0.1:8000/v1"},
		{name: OpenRouter, description: "OpenRouter (openrouter.ai)", baseURL: "https://openrouter.ai/api/v1",
			keyEnv: "OPENROUTER_API_KEY", keyRequired: true,
			headers: map[string]string{"HTTP-Referer": "https://github.com/sparrow-cli/sparrow", "X-Title": "Sparrow"}},
		{name: Groq, description: "Groq (api.groq.com)", baseURL: "https://api.groq.com/openai/v1",
			keyEnv: "GROQ_API_KEY", keyRequired: true},
		{name: DeepSeek, description: "DeepSeek (api.deepseek.com)", baseURL: "https://api.deepseek.com/v1",
			keyEnv: "DEEPSEEK_API_KEY", keyRequired: true},
		{name: Together, description: "Together AI (api.together.xyz)", baseURL: "https://api.together.xyz/v1",
			keyEnv: "TOGETHER_API_KEY", keyRequired: true},
	}
}

// Provider is one component of the plugin: OpenAI itself, a generic
// OpenAI-compatible server or a preset. It is safe for concurrent use;
// Configure may be called at any time and applies to later requests.
type Provider struct {
	preset preset
	client *http.Client
	// sleep waits between retries; it returns early with ctx's error.
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a random duration in [0, d).
	jitter    func(d time.Duration) time.Duration
	getenv    func(string) string
	now       func() time.Time
	firstByte time.Duration

	mu  sync.RWMutex
	cfg config
}

// Option adjusts a Provider; tests use them to inject fakes.
type Option func(*Provider)

// WithHTTPClient sets the HTTP client (default: a client whose dialer and
// TLS handshake time out after 30s).
func WithHTTPClient(c *http.Client) Option { return func(p *Provider) { p.client = c } }

// WithSleep replaces the backoff sleep between retries.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(p *Provider) { p.sleep = f }
}

// WithJitter replaces the random source of the backoff: f returns a
// duration in [0, d).
func WithJitter(f func(d time.Duration) time.Duration) Option {
	return func(p *Provider) { p.jitter = f }
}

// WithGetenv replaces os.Getenv for the API key and OLLAMA_HOST variables.
func WithGetenv(f func(string) string) Option { return func(p *Provider) { p.getenv = f } }

// WithFirstByteTimeout replaces the 30s limit on waiting for the response
// to begin (its status line and headers).
func WithFirstByteTimeout(d time.Duration) Option { return func(p *Provider) { p.firstByte = d } }

// Components returns every component the plugin serves, in manifest order.
func Components(opts ...Option) []provider.Provider {
	ps := presets()
	out := make([]provider.Provider, 0, len(ps))
	for _, pr := range ps {
		p, _ := New(pr.name, opts...)
		out = append(out, p)
	}
	return out
}

// New returns the named component, unconfigured: it then uses the
// preset's base URL and the API key from its environment variable.
func New(name string, opts ...Option) (*Provider, error) {
	for _, pr := range presets() {
		if pr.name != name {
			continue
		}
		p := &Provider{
			preset:    pr,
			sleep:     sleepCtx,
			jitter:    func(d time.Duration) time.Duration { return rand.N(d) },
			getenv:    os.Getenv,
			now:       time.Now,
			firstByte: defaultFirstByte,
			cfg:       config{api: apiChat, timeout: defaultTimeout, maxRetries: defaultMaxRetries},
		}
		for _, o := range opts {
			o(p)
		}
		if p.client == nil {
			p.client = defaultClient()
		}
		return p, nil
	}
	return nil, fmt.Errorf("openai: no component %q", name)
}

// defaultClient bounds connecting and the TLS handshake; the first byte and
// the whole stream are bounded per request.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: defaultFirstByte, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = defaultFirstByte
	return &http.Client{Transport: t}
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return p.preset.name }

// Description implements plugin.Describer.
func (p *Provider) Description() string { return p.preset.description }

// settings is the effective configuration of one request: config with the
// preset's defaults and the environment resolved.
type settings struct {
	config
	component string
	apiKey    string
	firstByte time.Duration
}

// settings snapshots the configuration for one request.
func (p *Provider) settings() *settings {
	p.mu.RLock()
	c := p.cfg
	p.mu.RUnlock()
	s := &settings{config: c, component: p.preset.name, firstByte: p.firstByte}
	if s.baseURL == "" {
		s.baseURL = p.defaultBaseURL()
	}
	s.apiKey = c.apiKey
	if s.apiKey == "" && p.preset.keyEnv != "" {
		s.apiKey = strings.TrimSpace(p.getenv(p.preset.keyEnv))
	}
	return s
}

// defaultBaseURL is the preset's base URL; Ollama's honours OLLAMA_HOST.
func (p *Provider) defaultBaseURL() string {
	if p.preset.name == Ollama {
		if h := strings.TrimSpace(p.getenv("OLLAMA_HOST")); h != "" {
			return ollamaBase(h)
		}
	}
	return p.preset.baseURL
}

// ollamaBase turns an OLLAMA_HOST or an Ollama base_url ("host:port",
// "http://host:port") into the base of its OpenAI-compatible API.
func ollamaBase(h string) string {
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return h
	}
	if u.Hostname() == "0.0.0.0" { // a bind address: connect locally
		u.Host = strings.Replace(u.Host, "0.0.0.0", "127.0.0.1", 1)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1"
	}
	return strings.TrimSuffix(u.String(), "/")
}

// check fails early on what no server would accept.
func (s *settings) check(p preset, req provider.Request) error {
	if s.baseURL == "" {
		return &provider.Error{Class: provider.ErrBadRequest, Message: s.component + ": base_url is not configured"}
	}
	if s.apiKey == "" && p.keyRequired {
		return &provider.Error{Class: provider.ErrAuth,
			Message: fmt.Sprintf("%s: no API key: set api_key in its provider block or %s", s.component, p.keyEnv)}
	}
	if req.Model == "" {
		return &provider.Error{Class: provider.ErrBadRequest, Message: s.component + ": no model in the request"}
	}
	return nil
}

// Chat implements provider.Provider: it streams one turn through the Chat
// Completions API, or the Responses API when api = "responses".
func (p *Provider) Chat(ctx context.Context, req provider.Request, send func(provider.Event) error) error {
	s := p.settings()
	if err := s.check(p.preset, req); err != nil {
		return err
	}
	var (
		path  string
		body  []byte
		err   error
		parse parser
	)
	if s.api == apiResponses {
		path, parse = "/responses", parseResponses
		body, err = responsesBody(req, s)
	} else {
		path, parse = "/chat/completions", parseChat
		body, err = chatBody(req, s)
	}
	if err != nil {
		return err
	}
	return p.retry(ctx, s.maxRetries, send, func(ctx context.Context, send func(provider.Event) error) error {
		return p.stream(ctx, s, path, body, parse, send)
	})
}

// header sets the headers of every request: auth, organization, the
// preset's headers, then the configured ones (which win).
func (s *settings) header(h http.Header, p preset) {
	h.Set("User-Agent", userAgent)
	if s.apiKey != "" {
		h.Set("Authorization", "Bearer "+s.apiKey)
	}
	if s.organization != "" {
		h.Set("OpenAI-Organization", s.organization)
	}
	for k, v := range p.headers {
		h.Set(k, v)
	}
	for k, v := range s.headers {
		h.Set(k, v)
	}
}

var (
	_ provider.Provider   = (*Provider)(nil)
	_ plugin.Configurable = (*Provider)(nil)
	_ plugin.Describer    = (*Provider)(nil)
)
