package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// minThinkingBudget is the smallest budget_tokens the API accepts.
const minThinkingBudget = 1024

// cacheControl marks the end of a prompt prefix the API should cache.
type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is a fresh cache breakpoint with the default lifetime.
func ephemeral() *cacheControl { return &cacheControl{Type: "ephemeral"} }

// block is one content block of the Messages API. Each block type has
// its own struct so that required fields are always present.
type block interface{ blockType() string }

type textBlock struct {
	Type         string        `json:"type"` // "text"
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type thinkingBlock struct {
	Type      string `json:"type"` // "thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type toolUseBlock struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type         string        `json:"type"` // "tool_result"
	ToolUseID    string        `json:"tool_use_id"`
	Content      string        `json:"content,omitempty"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

func (b *textBlock) blockType() string       { return b.Type }
func (b *thinkingBlock) blockType() string   { return b.Type }
func (b *toolUseBlock) blockType() string    { return b.Type }
func (b *toolResultBlock) blockType() string { return b.Type }

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type toolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type thinkingConfig struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int64  `json:"budget_tokens"`
}

// request is the body of POST /v1/messages. System is a string, or a list
// of text blocks when it carries a cache breakpoint.
type request struct {
	Model       string          `json:"model"`
	MaxTokens   int64           `json:"max_tokens"`
	System      any             `json:"system,omitempty"`
	Messages    []message       `json:"messages"`
	Tools       []toolDef       `json:"tools,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Thinking    *thinkingConfig `json:"thinking,omitempty"`
	Stream      bool            `json:"stream"`
}

// requestOptions are the provider settings that shape a request body.
type requestOptions struct {
	defaultMaxTokens int64
	caching          bool
}

// buildRequest maps a provider request onto the Messages API.
// Consecutive messages of one role are merged, as the API requires
// alternation; parts that cannot be sent (empty text, thinking without a
// signature) are dropped.
func buildRequest(r provider.Request, opts requestOptions) ([]byte, error) {
	out := request{Model: apiModelID(r.Model), MaxTokens: r.MaxOutputTokens, Temperature: r.Temperature, Stream: true}
	if out.Model == "" {
		return nil, errors.New("request names no model")
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = opts.defaultMaxTokens
	}
	tools, err := toolDefs(r.Tools)
	if err != nil {
		return nil, err
	}
	out.Tools = tools
	if out.Messages, err = messages(r.Messages); err != nil {
		return nil, err
	}
	if r.ThinkingBudget > 0 && canThink(out.Messages) {
		budget := max(r.ThinkingBudget, minThinkingBudget)
		out.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
		// The budget counts against max_tokens and must leave room for
		// the answer; the API also refuses a temperature with thinking.
		out.MaxTokens = max(out.MaxTokens, budget+minThinkingBudget)
		out.Temperature = nil
	}
	if r.System != "" {
		out.System = r.System
	}
	if opts.caching {
		addCacheBreakpoints(&out, r.System)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// canThink reports whether extended thinking may be enabled. When the
// request continues a tool-use turn, the API requires that turn's
// assistant message to open with a signed thinking block; one that does
// not (it came from another vendor after a fallback, or thinking was off)
// is answered without thinking rather than refused.
func canThink(msgs []message) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != string(provider.RoleUser) {
		return true
	}
	last := msgs[n-2].Content
	usesTools := false
	for _, b := range last {
		usesTools = usesTools || b.blockType() == "tool_use"
	}
	return !usesTools || last[0].blockType() == "thinking"
}

// toolDefs maps tool specs, checking each schema is a JSON object.
func toolDefs(specs []provider.ToolSpec) ([]toolDef, error) {
	var out []toolDef
	for _, t := range specs {
		schema := json.RawMessage(t.InputSchemaJSON)
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		if !isObject(schema) {
			return nil, fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
		}
		out = append(out, toolDef{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out, nil
}

// messages maps the conversation, merging consecutive same-role messages.
func messages(in []provider.Message) ([]message, error) {
	var out []message
	for i, m := range in {
		if m.Role != provider.RoleUser && m.Role != provider.RoleAssistant {
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		var blocks []block
		for _, p := range m.Parts {
			if b := toBlock(p); b != nil {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		role := string(m.Role)
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, message{Role: role, Content: blocks})
	}
	return out, nil
}

// toBlock maps one part, or returns nil for a part the API cannot take.
func toBlock(p provider.Part) block {
	switch {
	case p.ToolCall != nil:
		return &toolUseBlock{Type: "tool_use", ID: p.ToolCall.ID, Name: p.ToolCall.Name, Input: toolInput(p.ToolCall.ArgumentsJSON)}
	case p.ToolResult != nil:
		r := p.ToolResult
		return &toolResultBlock{Type: "tool_result", ToolUseID: r.CallID, Content: r.Content, IsError: r.IsError}
	case p.Thinking != nil:
		if p.Thinking.Signature == "" {
			return nil // unsigned reasoning (another vendor's) cannot be sent back
		}
		return &thinkingBlock{Type: "thinking", Thinking: p.Thinking.Text, Signature: p.Thinking.Signature}
	case p.Text != "":
		return &textBlock{Type: "text", Text: p.Text}
	}
	return nil
}

// toolInput is a tool call's arguments as the object the API requires. A
// call whose arguments were empty or cut short (a turn that hit
// max_tokens) is sent with {} so the conversation stays valid; its
// tool result already told the model what went wrong.
func toolInput(args string) json.RawMessage {
	raw := json.RawMessage(args)
	if !isObject(raw) {
		return json.RawMessage("{}")
	}
	return raw
}

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// addCacheBreakpoints marks prompt prefixes for caching: the end of the
// system prompt (or of the tools, when there is no system prompt), and
// the last block of the last two user messages, so the next turn reads
// what this one wrote. That is at most three of the API's four
// breakpoints. Prefixes below the model's minimum are not cached, and
// the API ignores the marks.
func addCacheBreakpoints(r *request, system string) {
	switch {
	case system != "":
		r.System = []textBlock{{Type: "text", Text: system, CacheControl: ephemeral()}}
	case len(r.Tools) > 0:
		r.Tools[len(r.Tools)-1].CacheControl = ephemeral()
	}
	marked := 0
	for i := len(r.Messages) - 1; i >= 0 && marked < 2; i-- {
		m := r.Messages[i]
		if m.Role != string(provider.RoleUser) {
			continue
		}
		switch b := m.Content[len(m.Content)-1].(type) {
		case *textBlock:
			b.CacheControl = ephemeral()
		case *toolResultBlock:
			b.CacheControl = ephemeral()
		default:
			continue
		}
		marked++
	}
}
