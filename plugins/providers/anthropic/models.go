package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// Bounds on listing models: one request, a few pages.
const (
	modelsTimeout  = 30 * time.Second
	modelsMaxPages = 10
	contextWindow  = 200_000
)

// knownModel is a built-in model entry.
type knownModel struct {
	provider.Model
	// Snapshot is the dated id sent to the API when a request names ID,
	// for family names the API does not take as an alias; empty when ID
	// is itself a valid alias.
	Snapshot string
}

// builtin is the price and limit table for well-known models: US dollars
// per million tokens, list prices as of 2025 (cache write is the 5-minute
// rate). A fresh slice each call, so callers may modify it.
func builtin() []knownModel {
	m := func(id, name, snapshot string, maxOut int64, in, out, read, write float64, thinking bool) knownModel {
		return knownModel{Snapshot: snapshot, Model: provider.Model{ID: id, DisplayName: name,
			ContextWindow: contextWindow, MaxOutputTokens: maxOut,
			InputPricePerMTok: in, OutputPricePerMTok: out, CacheReadPerMTok: read, CacheWritePerMTok: write,
			SupportsTools: true, SupportsThinking: thinking}}
	}
	return []knownModel{
		m("claude-opus-4-5", "Claude Opus 4.5", "", 64_000, 5, 25, 0.50, 6.25, true),
		m("claude-opus-4-1", "Claude Opus 4.1", "", 32_000, 15, 75, 1.50, 18.75, true),
		m("claude-opus-4", "Claude Opus 4", "claude-opus-4-20250514", 32_000, 15, 75, 1.50, 18.75, true),
		m("claude-sonnet-4-5", "Claude Sonnet 4.5", "", 64_000, 3, 15, 0.30, 3.75, true),
		m("claude-sonnet-4", "Claude Sonnet 4", "claude-sonnet-4-20250514", 64_000, 3, 15, 0.30, 3.75, true),
		m("claude-3-7-sonnet", "Claude Sonnet 3.7", "claude-3-7-sonnet-20250219", 64_000, 3, 15, 0.30, 3.75, true),
		m("claude-haiku-4-5", "Claude Haiku 4.5", "", 64_000, 1, 5, 0.10, 1.25, true),
		m("claude-3-5-haiku", "Claude Haiku 3.5", "claude-3-5-haiku-20241022", 8_192, 0.80, 4, 0.08, 1, false),
	}
}

// lookup finds the built-in entry for an id: the family id itself, or a
// dated snapshot or alias of it ("claude-sonnet-4-20250514",
// "claude-sonnet-4-0", "claude-3-7-sonnet-latest"). An unknown version
// ("claude-opus-4-9") is not priced as its family.
func lookup(id string) (knownModel, bool) {
	for _, k := range builtin() {
		if id == k.ID || id == k.Snapshot {
			return k, true
		}
		suffix, ok := strings.CutPrefix(id, k.ID+"-")
		if ok && (suffix == "0" || suffix == "latest" || isDate(suffix)) {
			return k, true
		}
	}
	return knownModel{}, false
}

func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// apiModelID is the id to send for a requested model: a family name the
// API does not accept ("claude-sonnet-4") becomes its dated snapshot.
func apiModelID(id string) string {
	for _, k := range builtin() {
		if id == k.ID && k.Snapshot != "" {
			return k.Snapshot
		}
	}
	return id
}

// priced is the model entry for an id, from the built-in table when it is
// known there, else with the limits every current model shares.
func priced(id, displayName string) provider.Model {
	k, ok := lookup(id)
	if !ok {
		k.Model = provider.Model{ContextWindow: contextWindow, SupportsTools: true,
			SupportsThinking: !strings.HasPrefix(id, "claude-3")}
	}
	k.ID = id
	if displayName != "" {
		k.DisplayName = displayName
	}
	return k.Model
}

// Models implements provider.Provider: the API's list, priced from the
// built-in table, then the built-in family names and the configured extra
// ids it lacks. When the API cannot be asked (no key, unreachable, an
// error), the built-in list and the extras are returned; Models never
// fails.
func (a *Anthropic) Models(ctx context.Context) ([]provider.Model, error) {
	cfg := a.settings()
	var out []provider.Model
	seen := map[string]bool{}
	add := func(m provider.Model) {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	if key := a.key(cfg); key != "" {
		listed, _ := a.listModels(ctx, cfg, key)
		for _, m := range listed {
			add(priced(m.ID, m.DisplayName))
		}
	}
	for _, k := range builtin() {
		add(k.Model)
	}
	for _, id := range cfg.Models {
		if id != "" {
			add(priced(id, ""))
		}
	}
	return out, nil
}

// apiModel is one entry of GET /v1/models.
type apiModel struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
}

// listModels pages through GET /v1/models.
func (a *Anthropic) listModels(ctx context.Context, cfg settings, key string) ([]apiModel, error) {
	ctx, cancel := context.WithTimeout(ctx, min(cfg.timeout, modelsTimeout))
	defer cancel()
	var all []apiModel
	after := ""
	for range modelsMaxPages {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.BaseURL+"/v1/models?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		setHeaders(req.Header, cfg, key)
		page, err := a.modelsPage(req)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if !page.HasMore || page.LastID == "" {
			break
		}
		after = page.LastID
	}
	return all, nil
}

type modelsPage struct {
	Data    []apiModel `json:"data"`
	HasMore bool       `json:"has_more"`
	LastID  string     `json:"last_id"`
}

func (a *Anthropic) modelsPage(req *http.Request) (modelsPage, error) {
	var page modelsPage
	resp, err := a.client.Do(req)
	if err != nil {
		return page, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return page, httpError(resp, a.now())
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return page, fmt.Errorf("decode model list: %w", err)
	}
	return page, nil
}
