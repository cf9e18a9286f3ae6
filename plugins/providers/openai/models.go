package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// maxModelsBody bounds a /models answer (OpenRouter's is a few MB).
const maxModelsBody = 32 << 20

// Models implements provider.Provider: the server's GET /models merged
// with the built-in OpenAI price table (openai only; other servers'
// OpenAI model ids are priced from it) and the configured models. When
// the server cannot be asked, the configured and built-in models are
// returned instead; only openai reports an auth failure, so a missing or
// wrong key shows up in `sparrow models`.
func (p *Provider) Models(ctx context.Context) ([]provider.Model, error) {
	s := p.settings()
	var listed []provider.Model
	var err error
	if s.baseURL != "" && (s.apiKey != "" || !p.preset.keyRequired) {
		listed, err = p.fetchModels(ctx, s)
	} else if p.preset.keyRequired {
		err = &provider.Error{Class: provider.ErrAuth,
			Message: fmt.Sprintf("%s: no API key: set api_key in its provider block or %s", s.component, p.preset.keyEnv)}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var perr *provider.Error
	if err != nil && p.preset.name == OpenAI && errors.As(err, &perr) && perr.Class == provider.ErrAuth {
		return nil, err
	}
	return mergeModels(p.preset.name == OpenAI, listed, s.models), nil
}

// fetchModels asks GET {base}/models, within the first-byte timeout.
func (p *Provider) fetchModels(ctx context.Context, s *settings) ([]provider.Model, error) {
	ctx, cancel := context.WithTimeout(ctx, s.firstByte)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.baseURL+"/models", nil)
	if err != nil {
		return nil, err
	}
	s.header(req.Header, p.preset)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, classifyHTTP(resp, body, p.now())
	}
	return parseModels(body)
}

// modelEntry is one model as OpenAI and compatible servers list it, with
// the extra fields some add: OpenRouter (name, context_length, pricing per
// token, top_provider, supported_parameters), Groq (context_window,
// max_completion_tokens), vLLM (max_model_len), Together (display_name,
// type, context_length, pricing per million tokens).
type modelEntry struct {
	ID                  string          `json:"id"`
	Name                string          `json:"name"`
	DisplayName         string          `json:"display_name"`
	Type                string          `json:"type"`
	ContextLength       int64           `json:"context_length"`
	ContextWindow       int64           `json:"context_window"`
	MaxModelLen         int64           `json:"max_model_len"`
	MaxCompletionTokens int64           `json:"max_completion_tokens"`
	Pricing             json.RawMessage `json:"pricing"`
	SupportedParameters []string        `json:"supported_parameters"`
	TopProvider         *struct {
		MaxCompletionTokens int64 `json:"max_completion_tokens"`
	} `json:"top_provider"`
}

// parseModels reads {"data": [...]} or a bare array (Together).
func parseModels(body []byte) ([]provider.Model, error) {
	var entries []modelEntry
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &entries); err != nil {
			return nil, fmt.Errorf("models: %w", err)
		}
	} else {
		var list struct {
			Data []modelEntry `json:"data"`
		}
		if err := json.Unmarshal(t, &list); err != nil {
			return nil, fmt.Errorf("models: %w", err)
		}
		entries = list.Data
	}
	var out []provider.Model
	for _, e := range entries {
		if e.ID == "" || !isChatModel(e) {
			continue
		}
		out = append(out, e.model())
	}
	return out, nil
}

// isChatModel filters out embedding, audio, image and moderation models.
func isChatModel(e modelEntry) bool {
	switch e.Type {
	case "", "chat", "language", "code", "model":
	default:
		return false
	}
	id := strings.ToLower(e.ID)
	for _, not := range []string{"embed", "whisper", "tts", "dall-e", "moderation", "transcribe",
		"realtime", "audio", "gpt-image", "davinci", "babbage", "sora"} {
		if strings.Contains(id, not) {
			return false
		}
	}
	return true
}

// model maps an entry, trusting what the server says over defaults.
func (e modelEntry) model() provider.Model {
	m := provider.Model{ID: e.ID, DisplayName: firstNonEmpty(e.Name, e.DisplayName, e.ID), SupportsTools: true,
		ContextWindow: firstPositive(e.ContextLength, e.ContextWindow, e.MaxModelLen), MaxOutputTokens: e.MaxCompletionTokens}
	if e.TopProvider != nil && e.TopProvider.MaxCompletionTokens > 0 {
		m.MaxOutputTokens = e.TopProvider.MaxCompletionTokens
	}
	if len(e.SupportedParameters) > 0 {
		m.SupportsTools = slices.Contains(e.SupportedParameters, "tools")
		m.SupportsThinking = slices.Contains(e.SupportedParameters, "reasoning")
	}
	if strings.Contains(e.ID, "reasoner") || strings.Contains(e.ID, "-r1") {
		m.SupportsThinking = true
	}
	m.InputPricePerMTok, m.OutputPricePerMTok, m.CacheReadPerMTok = e.prices()
	if b, ok := builtinFor(e.ID); ok {
		if m.InputPricePerMTok == 0 && m.OutputPricePerMTok == 0 {
			m.InputPricePerMTok, m.OutputPricePerMTok, m.CacheReadPerMTok = b.InputPricePerMTok, b.OutputPricePerMTok, b.CacheReadPerMTok
		}
		m.ContextWindow = firstPositive(m.ContextWindow, b.ContextWindow)
		m.MaxOutputTokens = firstPositive(m.MaxOutputTokens, b.MaxOutputTokens)
		m.SupportsThinking = m.SupportsThinking || b.SupportsThinking
		if m.DisplayName == m.ID && b.ID == e.ID {
			m.DisplayName = b.DisplayName
		}
	}
	return m
}

// prices reads OpenRouter's per-token strings ("prompt", "completion",
// "input_cache_read") or Together's per-million numbers ("input",
// "output"), as dollars per million tokens.
func (e modelEntry) prices() (in, out, cacheRead float64) {
	var p map[string]any
	if len(e.Pricing) == 0 || json.Unmarshal(e.Pricing, &p) != nil {
		return 0, 0, 0
	}
	perToken := func(k string) float64 {
		s, _ := p[k].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 { // OpenRouter's "-1" means variable
			return 0
		}
		return f * 1e6
	}
	if _, ok := p["prompt"]; ok {
		return perToken("prompt"), perToken("completion"), perToken("input_cache_read")
	}
	in, _ = p["input"].(float64)
	out, _ = p["output"].(float64)
	return in, out, 0
}

// mergeModels returns listed models, then (for openai) built-in ones, then
// configured ids, each id once, sorted by id.
func mergeModels(withBuiltins bool, listed []provider.Model, configured []string) []provider.Model {
	seen := map[string]bool{}
	out := make([]provider.Model, 0, len(listed)+len(configured)+10)
	add := func(m provider.Model) {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	for _, m := range listed {
		add(m)
	}
	if withBuiltins {
		for _, m := range builtinModels() {
			add(m)
		}
	}
	for _, id := range configured {
		if id = strings.TrimSpace(id); id != "" {
			add(modelEntry{ID: id}.model())
		}
	}
	slices.SortFunc(out, func(a, b provider.Model) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// firstPositive returns the first positive number.
func firstPositive(vs ...int64) int64 {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}
