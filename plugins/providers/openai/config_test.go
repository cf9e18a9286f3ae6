package openai

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func configValues(t *testing.T, v map[string]any) plugin.Config {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return plugin.Config{Values: b}
}

func TestComponentsMatchManifest(t *testing.T) {
	var names []string
	for _, c := range Components() {
		names = append(names, c.Name())
	}
	want := []string{"openai", "openai-compatible", "ollama", "lmstudio", "vllm", "openrouter", "groq", "deepseek", "together"}
	if !slices.Equal(names, want) {
		t.Errorf("components = %v, want %v", names, want)
	}
	for _, c := range Components() {
		schema := c.(plugin.Configurable).ConfigSchema()
		var required []string
		for _, a := range schema.Attributes {
			if a.Name == "api_key" && !a.Sensitive {
				t.Errorf("%s: api_key is not sensitive", c.Name())
			}
			if a.Required {
				required = append(required, a.Name)
			}
		}
		if (c.Name() == OpenAICompatible) != slices.Equal(required, []string{"base_url"}) {
			t.Errorf("%s: required attributes %v", c.Name(), required)
		}
	}
	if _, err := New("nope"); err == nil {
		t.Error("New(nope) succeeded")
	}
}

func TestConfigureRejects(t *testing.T) {
	for _, tc := range []struct {
		component string
		values    map[string]any
		want      []string
	}{
		{OpenAICompatible, map[string]any{}, []string{"base_url: required"}},
		{OpenAI, map[string]any{"base_url": "ftp://x", "api": "grpc", "timeout": "soon", "max_retries": -1},
			[]string{"base_url:", "api: \"grpc\"", "timeout: \"soon\"", "max_retries: -1"}},
		{VLLM, map[string]any{"max_retries": 1.5}, []string{"max_retries"}},
	} {
		p, _ := New(tc.component)
		err := p.Configure(t.Context(), configValues(t, tc.values))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: err = %v, want it to mention %q", tc.component, tc.values, err, w)
			}
		}
	}
}

func TestOllamaHost(t *testing.T) {
	for host, want := range map[string]string{
		"":                        "http://127.0.0.1:11434/v1",
		"0.0.0.0:11434":           "http://127.0.0.1:11434/v1",
		"http://gpu-box:11434":    "http://gpu-box:11434/v1",
		"https://ollama.example/": "https://ollama.example/v1",
	} {
		p, _ := New(Ollama, WithGetenv(func(k string) string {
			if k == "OLLAMA_HOST" {
				return host
			}
			return ""
		}))
		if got := p.settings().baseURL; got != want {
			t.Errorf("OLLAMA_HOST=%q: base = %q, want %q", host, got, want)
		}
	}
	// A base_url without /v1, as older configs have it.
	p, _ := New(Ollama)
	if err := p.Configure(t.Context(), configValues(t, map[string]any{"base_url": "http://127.0.0.1:11434"})); err != nil {
		t.Fatal(err)
	}
	if got := p.settings().baseURL; got != "http://127.0.0.1:11434/v1" {
		t.Errorf("base = %q", got)
	}
}

func TestAPIKeyFromEnvironment(t *testing.T) {
	f := newFake(t, sseChunks(chunk(`{"content":"ok"}`, "stop")))
	p, _ := New(Groq, WithGetenv(func(k string) string {
		if k == "GROQ_API_KEY" {
			return "gsk-env"
		}
		return ""
	}))
	if err := p.Configure(t.Context(), configValues(t, map[string]any{"base_url": f.URL()})); err != nil {
		t.Fatal(err)
	}
	if _, err := chat(t, p, provider.Request{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Header.Get("Authorization"); got != "Bearer gsk-env" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestMissingKeyFailsWithoutRequest(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request) { t.Error("request sent") })
	p, _ := New(OpenAI, WithGetenv(func(string) string { return "" }))
	if err := p.Configure(t.Context(), configValues(t, map[string]any{"base_url": f.URL()})); err != nil {
		t.Fatal(err)
	}
	_, err := chat(t, p, provider.Request{})
	if perr := asError(t, err); perr.Class != provider.ErrAuth || !strings.Contains(perr.Message, "OPENAI_API_KEY") {
		t.Errorf("error = %v", perr)
	}
	// A local server needs no key, and gets no Authorization header.
	f2 := newFake(t, sseChunks(chunk(`{"content":"ok"}`, "stop")))
	local, _ := New(LMStudio, WithGetenv(func(string) string { return "" }))
	if err := local.Configure(t.Context(), configValues(t, map[string]any{"base_url": f2.URL()})); err != nil {
		t.Fatal(err)
	}
	if _, err := chat(t, local, provider.Request{Model: "qwen"}); err != nil {
		t.Fatal(err)
	}
	if h := f2.requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q", h)
	}
}
