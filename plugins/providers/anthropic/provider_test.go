package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func TestConfigureRejects(t *testing.T) {
	cases := map[string]string{
		`{"timeout":"soon"}`:             "timeout",
		`{"timeout":"-1s"}`:              "timeout",
		`{"max_retries":-1}`:             "max_retries",
		`{"max_retries":1.5}`:            "max_retries",
		`{"max_tokens":0}`:               "max_tokens",
		`{"base_url":"api.example"}`:     "base_url",
		`{"anthropic_version":""}`:       "anthropic_version",
		`{"beta":"not-a-list"}`:          "anthropic",
		`{"base_url":"ftp://127.0.0.1"}`: "base_url",
	}
	for in, want := range cases {
		a := New()
		err := a.Configure(context.Background(), plugin.Config{Values: json.RawMessage(in)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Configure(%s) = %v, want an error naming %s", in, err, want)
		}
		if a.settings().BaseURL != defaultBaseURL {
			t.Errorf("Configure(%s) changed the settings on error", in)
		}
	}
}

// TestSchemaDefaultsConfigure: the schema's defaults, as the kernel fills
// them in, are a valid configuration.
func TestSchemaDefaultsConfigure(t *testing.T) {
	a := New()
	values := map[string]any{}
	for _, attr := range a.ConfigSchema().Attributes {
		if attr.Default != nil {
			values[attr.Name] = attr.Default
		}
		if attr.Name == "api_key" && !attr.Sensitive {
			t.Error("api_key is not sensitive")
		}
	}
	raw, _ := json.Marshal(values)
	if err := a.Configure(context.Background(), plugin.Config{Values: raw}); err != nil {
		t.Fatal(err)
	}
	cfg := a.settings()
	if cfg.BaseURL != "https://api.anthropic.com" || cfg.timeout.Minutes() != 10 || cfg.MaxRetries != 3 || cfg.MaxTokens != 8192 || !cfg.caching() {
		t.Errorf("settings %+v", cfg)
	}
}

func TestKeyFromEnvironment(t *testing.T) {
	h := newHarness(t, map[string]any{"api_key": ""}, events(evStart, evEndTurn, evStop))
	h.getenv = func(name string) string {
		if name == "ANTHROPIC_API_KEY" {
			return "sk-ant-env"
		}
		return ""
	}
	if _, err := h.chat(hello()); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.requests()[0].Header.Get("x-api-key"); got != "sk-ant-env" {
		t.Errorf("x-api-key = %q", got)
	}
}

func TestNoKeyIsAuthWithoutARequest(t *testing.T) {
	h := newHarness(t, map[string]any{"api_key": ""}, events(evStart, evStop))
	_, err := h.chat(hello())
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrAuth || !strings.Contains(perr.Message, "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	if len(h.fake.requests()) != 0 {
		t.Error("sent a request without a key")
	}
}

func TestBadRequestBeforeSending(t *testing.T) {
	h := newHarness(t, nil, events(evStart, evStop))
	_, err := h.chat(provider.Request{Model: "m", Tools: []provider.ToolSpec{{Name: "x", InputSchemaJSON: "{"}}})
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrBadRequest || len(h.fake.requests()) != 0 {
		t.Fatalf("err = %v", err)
	}
}
