package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// known are well-known models with list prices per million tokens (as of
// 2025): input, output, cache read, cache write.
var known = []provider.Model{
	{ID: "claude-opus-4", DisplayName: "Claude Opus 4", ContextWindow: 200000, MaxOutputTokens: 32000, InputPricePerMTok: 15, OutputPricePerMTok: 75, CacheReadPerMTok: 1.5, CacheWritePerMTok: 18.75, SupportsTools: true, SupportsThinking: true},
	{ID: "claude-sonnet-4", DisplayName: "Claude Sonnet 4", ContextWindow: 200000, MaxOutputTokens: 64000, InputPricePerMTok: 3, OutputPricePerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75, SupportsTools: true, SupportsThinking: true},
	{ID: "claude-3-7-sonnet", DisplayName: "Claude Sonnet 3.7", ContextWindow: 200000, MaxOutputTokens: 64000, InputPricePerMTok: 3, OutputPricePerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75, SupportsTools: true, SupportsThinking: true},
	{ID: "claude-3-5-haiku", DisplayName: "Claude Haiku 3.5", ContextWindow: 200000, MaxOutputTokens: 8192, InputPricePerMTok: 0.8, OutputPricePerMTok: 4, CacheReadPerMTok: 0.08, CacheWritePerMTok: 1, SupportsTools: true},
}

// price finds the built-in entry for an id, dated snapshots included
// ("claude-sonnet-4-20250514" is priced as "claude-sonnet-4").
func price(id string) (provider.Model, bool) {
	for _, m := range known {
		if id == m.ID || strings.HasPrefix(id, m.ID+"-") {
			return m, true
		}
	}
	return provider.Model{}, false
}

// Models implements provider.Provider: the API's list, priced from the
// built-in table, plus configured ids; the built-in list when the API
// cannot be reached.
func (a *Anthropic) Models(ctx context.Context) ([]provider.Model, error) {
	cfg := a.settings()
	var out []provider.Model
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.BaseURL+"/v1/models", nil)
	if err == nil && a.key(cfg) != "" {
		req.Header.Set("x-api-key", a.key(cfg))
		req.Header.Set("anthropic-version", cfg.AnthropicVersion)
		if resp, err := a.client.Do(req); err == nil {
			var list struct {
				Data []struct {
					ID          string `json:"id"`
					DisplayName string `json:"display_name"`
				} `json:"data"`
			}
			if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&list) == nil {
				for _, d := range list.Data {
					m, ok := price(d.ID)
					if !ok {
						m = provider.Model{ContextWindow: 200000, SupportsTools: true}
					}
					m.ID, m.DisplayName = d.ID, d.DisplayName
					out = append(out, m)
				}
			}
			resp.Body.Close()
		}
	}
	if len(out) == 0 {
		out = slices.Clone(known)
	}
	for _, id := range cfg.Models {
		if !slices.ContainsFunc(out, func(m provider.Model) bool { return m.ID == id }) {
			m, _ := price(id)
			m.ID = id
			out = append(out, m)
		}
	}
	return out, nil
}
