package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func ids(models []provider.Model) []string {
	var out []string
	for _, m := range models {
		out = append(out, m.ID)
	}
	return out
}

func byID(models []provider.Model, id string) (provider.Model, bool) {
	for _, m := range models {
		if m.ID == id {
			return m, true
		}
	}
	return provider.Model{}, false
}

func TestModelsMergesAPIListWithPrices(t *testing.T) {
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("content-type", "application/json")
			fmt.Fprint(w, body)
		}
	}
	h := newHarness(t, map[string]any{"models": []string{"claude-sonnet-4-0", "my-finetune"}},
		page(`{"data":[{"type":"model","id":"claude-opus-4-5-20251101","display_name":"Claude Opus 4.5","created_at":"2025-11-24T00:00:00Z"},
			{"type":"model","id":"claude-sonnet-4-20250514","display_name":"Claude Sonnet 4"}],"has_more":true,"first_id":"claude-opus-4-5-20251101","last_id":"claude-sonnet-4-20250514"}`),
		page(`{"data":[{"type":"model","id":"claude-next-1","display_name":"Claude Next"}],"has_more":false}`))
	models, err := h.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.fake.requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/models" || reqs[1].Query != "after_id=claude-sonnet-4-20250514&limit=1000" ||
		reqs[0].Header.Get("x-api-key") != "sk-ant-test" || reqs[0].Header.Get("anthropic-version") != "2023-06-01" {
		t.Fatalf("requests %+v", reqs)
	}
	got := ids(models)
	if got[0] != "claude-opus-4-5-20251101" || got[1] != "claude-sonnet-4-20250514" || got[2] != "claude-next-1" {
		t.Errorf("API models first, in order: %v", got)
	}
	opus, _ := byID(models, "claude-opus-4-5-20251101")
	if opus.InputPricePerMTok != 5 || opus.OutputPricePerMTok != 25 || opus.CacheReadPerMTok != 0.5 || opus.DisplayName != "Claude Opus 4.5" {
		t.Errorf("opus 4.5 = %+v", opus)
	}
	next, _ := byID(models, "claude-next-1")
	if next.InputPricePerMTok != 0 || next.ContextWindow != 200000 || !next.SupportsTools {
		t.Errorf("unknown model = %+v", next)
	}
	for _, id := range []string{"claude-sonnet-4", "claude-3-5-haiku", "claude-sonnet-4-0", "my-finetune"} {
		if _, ok := byID(models, id); !ok {
			t.Errorf("%s missing from %v", id, got)
		}
	}
	if m, _ := byID(models, "claude-sonnet-4-0"); m.CacheWritePerMTok != 3.75 {
		t.Errorf("alias priced %+v", m)
	}
}

func TestModelsFallsBackToBuiltin(t *testing.T) {
	h := newHarness(t, nil, apiErr(500, "api_error", "down"))
	models, err := h.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != len(builtin()) {
		t.Fatalf("got %v", ids(models))
	}
	sonnet, _ := byID(models, "claude-sonnet-4")
	want := provider.Model{ID: "claude-sonnet-4", DisplayName: "Claude Sonnet 4", ContextWindow: 200000, MaxOutputTokens: 64000,
		InputPricePerMTok: 3, OutputPricePerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75, SupportsTools: true, SupportsThinking: true}
	if sonnet != want {
		t.Errorf("sonnet = %+v", sonnet)
	}
	haiku, _ := byID(models, "claude-3-5-haiku")
	if haiku.InputPricePerMTok != 0.8 || haiku.CacheReadPerMTok != 0.08 || haiku.CacheWritePerMTok != 1 || haiku.SupportsThinking {
		t.Errorf("haiku = %+v", haiku)
	}
}

func TestModelsWithoutKeyAsksNobody(t *testing.T) {
	h := newHarness(t, map[string]any{"api_key": ""}, apiErr(500, "api_error", "unreachable"))
	models, _ := h.Models(context.Background())
	if len(h.fake.requests()) != 0 || len(models) != len(builtin()) {
		t.Errorf("%d requests, %d models", len(h.fake.requests()), len(models))
	}
}

func TestLookup(t *testing.T) {
	cases := map[string]string{
		"claude-sonnet-4":            "claude-sonnet-4",
		"claude-sonnet-4-20250514":   "claude-sonnet-4",
		"claude-sonnet-4-0":          "claude-sonnet-4",
		"claude-sonnet-4-5":          "claude-sonnet-4-5",
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"claude-opus-4-1-20250805":   "claude-opus-4-1",
		"claude-3-7-sonnet-latest":   "claude-3-7-sonnet",
		"claude-3-5-haiku-20241022":  "claude-3-5-haiku",
		"claude-opus-4-9":            "", // an unknown version is not priced as its family
		"claude-sonnet-4-x":          "",
		"gpt-4.1":                    "",
	}
	for id, want := range cases {
		k, ok := lookup(id)
		if ok != (want != "") || k.ID != want {
			t.Errorf("lookup(%q) = %q, %v; want %q", id, k.ID, ok, want)
		}
	}
}

func TestAPIModelID(t *testing.T) {
	cases := map[string]string{
		"claude-sonnet-4":          "claude-sonnet-4-20250514",
		"claude-3-5-haiku":         "claude-3-5-haiku-20241022",
		"claude-sonnet-4-5":        "claude-sonnet-4-5",
		"claude-sonnet-4-20250514": "claude-sonnet-4-20250514",
		"anything-else":            "anything-else",
	}
	for in, want := range cases {
		if got := apiModelID(in); got != want {
			t.Errorf("apiModelID(%q) = %q, want %q", in, got, want)
		}
	}
}
