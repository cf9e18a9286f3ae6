package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// block is one content block of the Messages API.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type thinkingCfg struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens"`
}

type request struct {
	Model       string       `json:"model"`
	MaxTokens   int64        `json:"max_tokens"`
	System      string       `json:"system,omitempty"`
	Messages    []message    `json:"messages"`
	Tools       []toolDef    `json:"tools,omitempty"`
	Temperature *float64     `json:"temperature,omitempty"`
	Thinking    *thinkingCfg `json:"thinking,omitempty"`
	Stream      bool         `json:"stream"`
}

// buildRequest maps a provider request onto the Messages API, merging
// consecutive messages of one role as the API requires.
func buildRequest(r provider.Request, defaultMax int64) ([]byte, error) {
	out := request{Model: r.Model, MaxTokens: r.MaxOutputTokens, System: r.System, Temperature: r.Temperature, Stream: true}
	if out.MaxTokens <= 0 {
		out.MaxTokens = defaultMax
	}
	if r.ThinkingBudget > 0 {
		out.Thinking = &thinkingCfg{Type: "enabled", BudgetTokens: r.ThinkingBudget}
		out.MaxTokens = max(out.MaxTokens, r.ThinkingBudget+1024)
	}
	for _, t := range r.Tools {
		schema := json.RawMessage(t.InputSchemaJSON)
		if !json.Valid(schema) {
			return nil, fmt.Errorf("tool %s: input schema is not JSON", t.Name)
		}
		out.Tools = append(out.Tools, toolDef{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	for i, m := range r.Messages {
		var blocks []block
		for _, p := range m.Parts {
			b, err := toBlock(p)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			if b != nil {
				blocks = append(blocks, *b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		role := string(m.Role)
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
			continue
		}
		out.Messages = append(out.Messages, message{Role: role, Content: blocks})
	}
	return json.Marshal(out)
}

func toBlock(p provider.Part) (*block, error) {
	switch {
	case p.ToolCall != nil:
		input := json.RawMessage(p.ToolCall.ArgumentsJSON)
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		if !json.Valid(input) {
			return nil, fmt.Errorf("tool call %s: arguments are not JSON", p.ToolCall.ID)
		}
		return &block{Type: "tool_use", ID: p.ToolCall.ID, Name: p.ToolCall.Name, Input: input}, nil
	case p.ToolResult != nil:
		return &block{Type: "tool_result", ToolUseID: p.ToolResult.CallID, Content: p.ToolResult.Content, IsError: p.ToolResult.IsError}, nil
	case p.Thinking != nil:
		if p.Thinking.Signature == "" {
			return nil, nil // unsigned thinking cannot be sent back
		}
		return &block{Type: "thinking", Thinking: p.Thinking.Text, Signature: p.Thinking.Signature}, nil
	case p.Text != "":
		return &block{Type: "text", Text: p.Text}, nil
	}
	return nil, nil
}
