package openai

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func jsonBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}
}

func modelIDs(ms []provider.Model) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

func TestOpenAIModelsMergeListBuiltinsAndConfig(t *testing.T) {
	f := newFake(t, jsonBody(`{"object":"list","data":[
	  {"id":"gpt-4o-2024-08-06","object":"model","created":1722814719,"owned_by":"system"},
	  {"id":"text-embedding-3-small","object":"model","created":1705948997,"owned_by":"system"},
	  {"id":"whisper-1","object":"model","created":1677532384,"owned_by":"openai-internal"},
	  {"id":"gpt-5","object":"model","created":1754425777,"owned_by":"system"}]}`))
	p, _ := testProvider(t, OpenAI, f, map[string]any{"models": []string{"ft:gpt-4.1:acme::abc"}})
	got, err := p.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ft:gpt-4.1:acme::abc", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-2024-08-06",
		"gpt-4o-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "o3", "o4-mini"}
	if d := cmp.Diff(want, modelIDs(got)); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	r := f.requests()[0]
	if r.Method != http.MethodGet || r.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request %s %s %v", r.Method, r.Path, r.Header)
	}
	for _, m := range got {
		if m.ID == "gpt-4o-2024-08-06" && (m.InputPricePerMTok != 2.5 || m.OutputPricePerMTok != 10 || m.ContextWindow != 128_000) {
			t.Errorf("snapshot not priced from gpt-4o: %+v", m)
		}
		if m.ID == "gpt-5" && (m.DisplayName != "GPT-5" || !m.SupportsThinking || m.CacheReadPerMTok != 0.125) {
			t.Errorf("gpt-5: %+v", m)
		}
	}
}

func TestOpenAIModelsAuth(t *testing.T) {
	f := newFake(t, jsonError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided", nil))
	p, _ := testProvider(t, OpenAI, f, nil)
	_, err := p.Models(t.Context())
	if perr := asError(t, err); perr.Class != provider.ErrAuth {
		t.Errorf("error = %v", perr)
	}
	// Any other failure falls back to the built-in list.
	f2 := newFake(t, jsonError(500, "server_error", "", "oops", nil))
	p2, _ := testProvider(t, OpenAI, f2, nil)
	got, err := p2.Models(t.Context())
	if err != nil || len(got) != len(builtinModels()) {
		t.Errorf("got %d models, %v", len(got), err)
	}
}

func TestPresetModelsFallBackToConfigured(t *testing.T) {
	f := newFake(t, jsonError(404, "", "", "404 page not found", nil))
	p, _ := testProvider(t, Ollama, f, map[string]any{"models": []string{"qwen3:8b", "llama3.2"}})
	got, err := p.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"llama3.2", "qwen3:8b"}, modelIDs(got)); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
}

func TestOpenRouterModelsCarryPricesAndLimits(t *testing.T) {
	f := newFake(t, jsonBody(`{"data":[
	  {"id":"anthropic/claude-sonnet-4","name":"Anthropic: Claude Sonnet 4","context_length":200000,
	   "pricing":{"prompt":"0.000003","completion":"0.000015","input_cache_read":"0.0000003"},
	   "top_provider":{"context_length":200000,"max_completion_tokens":64000,"is_moderated":false},
	   "supported_parameters":["max_tokens","temperature","tools","reasoning"]},
	  {"id":"openai/gpt-4o-mini","name":"OpenAI: GPT-4o-mini","context_length":128000,
	   "pricing":{"prompt":"0","completion":"0"},"supported_parameters":["max_tokens"]}]}`))
	p, _ := testProvider(t, OpenRouter, f, nil)
	got, err := p.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Model{
		{ID: "anthropic/claude-sonnet-4", DisplayName: "Anthropic: Claude Sonnet 4", ContextWindow: 200000, MaxOutputTokens: 64000,
			InputPricePerMTok: 3, OutputPricePerMTok: 15, CacheReadPerMTok: 0.3, SupportsTools: true, SupportsThinking: true},
		{ID: "openai/gpt-4o-mini", DisplayName: "OpenAI: GPT-4o-mini", ContextWindow: 128000, MaxOutputTokens: 16384,
			InputPricePerMTok: 0.15, OutputPricePerMTok: 0.6, CacheReadPerMTok: 0.075},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}

func TestTogetherModelsBareArray(t *testing.T) {
	f := newFake(t, jsonBody(`[
	  {"id":"meta-llama/Llama-3.3-70B-Instruct-Turbo","object":"model","type":"chat","display_name":"Llama 3.3 70B",
	   "context_length":131072,"pricing":{"hourly":0,"input":0.88,"output":0.88,"base":0,"finetune":0}},
	  {"id":"BAAI/bge-large-en-v1.5","object":"model","type":"embedding","context_length":512}]`))
	p, _ := testProvider(t, Together, f, nil)
	got, err := p.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Model{{ID: "meta-llama/Llama-3.3-70B-Instruct-Turbo", DisplayName: "Llama 3.3 70B",
		ContextWindow: 131072, InputPricePerMTok: 0.88, OutputPricePerMTok: 0.88, SupportsTools: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}
