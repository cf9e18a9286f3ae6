package openai

import (
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// builtinModels are well-known OpenAI models with their published list
// prices in US dollars per million tokens, as of 2025 (standard tier;
// cached input is billed at CacheReadPerMTok, cache writes are free).
// Check https://openai.com/api/pricing before relying on them for billing.
func builtinModels() []provider.Model {
	m := func(id, name string, ctx, out int64, in, cached, output float64, thinking bool) provider.Model {
		return provider.Model{ID: id, DisplayName: name, ContextWindow: ctx, MaxOutputTokens: out,
			InputPricePerMTok: in, CacheReadPerMTok: cached, OutputPricePerMTok: output,
			SupportsTools: true, SupportsThinking: thinking}
	}
	return []provider.Model{
		m("gpt-5", "GPT-5", 400_000, 128_000, 1.25, 0.125, 10.00, true),
		m("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, 0.25, 0.025, 2.00, true),
		m("gpt-5-nano", "GPT-5 nano", 400_000, 128_000, 0.05, 0.005, 0.40, true),
		m("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, 2.00, 0.50, 8.00, false),
		m("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, 0.40, 0.10, 1.60, false),
		m("gpt-4.1-nano", "GPT-4.1 nano", 1_047_576, 32_768, 0.10, 0.025, 0.40, false),
		m("gpt-4o", "GPT-4o", 128_000, 16_384, 2.50, 1.25, 10.00, false),
		m("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, 0.15, 0.075, 0.60, false),
		m("o3", "o3", 200_000, 100_000, 2.00, 0.50, 8.00, true),
		m("o4-mini", "o4-mini", 200_000, 100_000, 1.10, 0.275, 4.40, true),
	}
}

// builtinFor returns the built-in entry for a model id: the id itself, a
// dated snapshot of it ("gpt-4o-2024-08-06") or OpenRouter's
// "openai/gpt-4o" spelling.
func builtinFor(id string) (provider.Model, bool) {
	id = strings.TrimPrefix(id, "openai/")
	for _, b := range builtinModels() {
		if id == b.ID || strings.HasPrefix(id, b.ID+"-20") {
			return b, true
		}
	}
	return provider.Model{}, false
}
