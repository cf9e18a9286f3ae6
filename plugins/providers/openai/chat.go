package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxCompletionTokens int64          `json:"max_completion_tokens,omitempty"`
	MaxTokens           int64          `json:"max_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Seed                *int64         `json:"seed,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is one message. Content is a string, or nil for an
// assistant message that only calls tools.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string          `json:"type"`
	Function chatFunctionDef `json:"function"`
}

type chatFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// toolErrorPrefix marks a failed tool's output: Chat Completions has no
// is_error flag.
const toolErrorPrefix = "Error: "

// chatBody maps a request to Chat Completions. Thinking parts are dropped:
// the API takes no reasoning back.
func chatBody(req provider.Request, s *settings) ([]byte, error) {
	body := chatRequest{Model: req.Model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true},
		Temperature: req.Temperature, Seed: req.Seed}
	if req.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, chatMessages(m)...)
	}
	params, err := toolParams(req.Tools)
	if err != nil {
		return nil, err
	}
	for i, t := range req.Tools {
		body.Tools = append(body.Tools, chatTool{Type: "function",
			Function: chatFunctionDef{Name: t.Name, Description: t.Description, Parameters: params[i]}})
	}
	if s.component == OpenAI {
		body.MaxCompletionTokens = req.MaxOutputTokens
		if req.ThinkingBudget > 0 && isReasoningModel(req.Model) {
			body.ReasoningEffort = effort(req.ThinkingBudget)
		}
	} else {
		body.MaxTokens = req.MaxOutputTokens
	}
	return json.Marshal(body)
}

// chatMessages maps one message. A user message's tool results become
// "tool" messages, placed first so they follow the assistant's calls.
func chatMessages(m provider.Message) []chatMessage {
	var (
		out   []chatMessage
		texts []string
		calls []chatToolCall
	)
	for _, p := range m.Parts {
		switch {
		case p.ToolResult != nil:
			content := p.ToolResult.Content
			if p.ToolResult.IsError {
				content = toolErrorPrefix + content
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: p.ToolResult.CallID, Content: content})
		case p.ToolCall != nil:
			calls = append(calls, chatToolCall{ID: p.ToolCall.ID, Type: "function",
				Function: chatFunction{Name: p.ToolCall.Name, Arguments: argsOrEmpty(p.ToolCall.ArgumentsJSON)}})
		case p.Thinking != nil:
			// dropped: Chat Completions takes no reasoning back
		case p.Text != "":
			texts = append(texts, p.Text)
		}
	}
	if m.Role == provider.RoleAssistant {
		if len(texts) == 0 && len(calls) == 0 {
			return out
		}
		msg := chatMessage{Role: "assistant", ToolCalls: calls}
		if len(texts) > 0 {
			msg.Content = strings.Join(texts, "\n")
		}
		return append(out, msg)
	}
	if len(texts) > 0 {
		out = append(out, chatMessage{Role: string(m.Role), Content: strings.Join(texts, "\n")})
	}
	return out
}

// argsOrEmpty returns a tool call's arguments, "{}" when it has none.
func argsOrEmpty(a string) string {
	if strings.TrimSpace(a) == "" {
		return "{}"
	}
	return a
}

// toolParams checks and returns each tool's JSON schema; a tool without
// one takes an empty object.
func toolParams(tools []provider.ToolSpec) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		schema := strings.TrimSpace(t.InputSchemaJSON)
		if schema == "" {
			schema = `{"type":"object","properties":{}}`
		}
		if !json.Valid([]byte(schema)) {
			return nil, &provider.Error{Class: provider.ErrBadRequest,
				Message: fmt.Sprintf("tool %q: input schema is not valid JSON", t.Name)}
		}
		out[i] = json.RawMessage(schema)
	}
	return out, nil
}

// isReasoningModel reports whether an OpenAI model takes a reasoning
// effort (o-series and gpt-5).
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// effort maps a thinking budget in tokens to OpenAI's reasoning effort.
func effort(budget int64) string {
	switch {
	case budget <= 4096:
		return "low"
	case budget <= 16384:
		return "medium"
	}
	return "high"
}

// chatChunk is one streamed chunk of a Chat Completion.
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			Refusal          string `json:"refusal"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	// XGroq carries Groq's usage on the last chunk.
	XGroq *struct {
		Usage *chatUsage `json:"usage"`
	} `json:"x_groq"`
	Error *apiError `json:"error"`
}

// chatUsage counts a completion's tokens; prompt tokens include cached ones.
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's spelling of cached tokens.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

// usage maps to provider.Usage, whose InputTokens exclude cache reads (as
// Anthropic counts them), so cost = input·price + cached·cache price.
func (u *chatUsage) usage() provider.Usage {
	cached := u.PromptCacheHitTokens
	if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens > 0 {
		cached = u.PromptTokensDetails.CachedTokens
	}
	return provider.Usage{InputTokens: max(u.PromptTokens-cached, 0), OutputTokens: u.CompletionTokens, CacheReadTokens: cached}
}

// chatState follows one streamed Chat Completion.
type chatState struct {
	send    func(provider.Event) error
	calls   toolCalls
	usage   provider.Usage
	finish  string
	refused bool
}

// parseChat reads a Chat Completions stream: text, reasoning and tool-call
// deltas as they come, then Usage and Stop at [DONE].
func parseChat(r *sseReader, send func(provider.Event) error) error {
	st := &chatState{send: send}
	for {
		ev, err := next(r)
		switch {
		case errors.Is(err, io.EOF) && st.finish != "":
			return st.end() // no [DONE], but the answer was complete
		case errors.Is(err, io.EOF), errors.Is(err, errStreamCut):
			return streamEndedEarly("no [DONE] and no finish_reason")
		case err != nil:
			return err
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			return st.end()
		}
		var c chatChunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			return malformed(ev, err)
		}
		if err := st.chunk(&c); err != nil {
			return err
		}
	}
}

// chunk handles one chunk; only the first choice is read (n = 1).
func (st *chatState) chunk(c *chatChunk) error {
	if c.Error != nil {
		return classifyStreamError(*c.Error)
	}
	if c.Usage != nil {
		st.usage = c.Usage.usage()
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		st.usage = c.XGroq.Usage.usage()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		thinking := d.ReasoningContent // DeepSeek, vLLM; some servers send both spellings
		if thinking == "" {
			thinking = d.Reasoning // OpenRouter, newer vLLM
		}
		if thinking != "" {
			if err := st.send(provider.Event{Thinking: &provider.Thinking{Text: thinking}}); err != nil {
				return err
			}
		}
		if text := d.Content + d.Refusal; text != "" {
			st.refused = st.refused || d.Refusal != ""
			if err := st.send(provider.Event{Text: text}); err != nil {
				return err
			}
		}
		for _, tc := range d.ToolCalls {
			if err := st.calls.delta(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments, st.send); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			st.finish = *ch.FinishReason
		}
	}
	return nil
}

// end sends the Usage and Stop events that close a turn.
func (st *chatState) end() error {
	if err := st.send(provider.Event{Usage: &st.usage}); err != nil {
		return err
	}
	return st.send(provider.Event{Stop: st.stopReason()})
}

func (st *chatState) stopReason() provider.StopReason {
	switch {
	case st.refused || st.finish == "content_filter":
		return provider.StopRefusal
	case st.finish == "tool_calls" || st.finish == "function_call":
		return provider.StopToolUse
	case st.finish == "length":
		return provider.StopMaxTokens
	case st.calls.n > 0:
		return provider.StopToolUse // some servers say "stop" after tool calls
	}
	return provider.StopEndTurn
}

// toolCalls numbers a turn's tool calls 0, 1, … in order of appearance and
// sends each call's id and name on its first fragment only. A server that
// reuses an index for a new call id (some send every call at index 0) or
// sends no index at all still gets one number per call.
type toolCalls struct {
	n     int
	last  int          // server index of the latest fragment
	byIdx map[int]call // server index → current call
}

type call struct {
	id, name string
	ours     int
}

// delta sends one fragment of a tool call.
func (tc *toolCalls) delta(index *int, id, name, args string, send func(provider.Event) error) error {
	if tc.byIdx == nil {
		tc.byIdx = map[int]call{}
	}
	idx := tc.serverIndex(index, id)
	c, ok := tc.byIdx[idx]
	d := &provider.ToolCallDelta{ArgumentsDelta: args}
	if !ok || (id != "" && c.id != "" && id != c.id) {
		c = call{id: id, name: name, ours: tc.n}
		tc.n++
		d.ID, d.Name = id, name
	} else {
		if c.id == "" && id != "" {
			c.id, d.ID = id, id
		}
		if c.name == "" && name != "" {
			c.name, d.Name = name, name
		}
	}
	tc.byIdx[idx], tc.last = c, idx
	d.Index = c.ours
	if d.ID == "" && d.Name == "" && d.ArgumentsDelta == "" {
		return nil
	}
	return send(provider.Event{ToolCall: d})
}

// serverIndex is the fragment's index, or for a server that sends none:
// the call with the same id, the latest call for a fragment without an id,
// else a fresh (negative, so never a real index) key.
func (tc *toolCalls) serverIndex(index *int, id string) int {
	if index != nil {
		return *index
	}
	if id == "" && tc.n > 0 {
		return tc.last
	}
	for k, c := range tc.byIdx {
		if id != "" && c.id == id {
			return k
		}
	}
	return -1 - tc.n
}
