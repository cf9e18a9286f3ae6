// Package provider is the SDK for model providers. A provider implements
// Provider, streaming a model's answer as Events; a plugin's main calls
// Serve with every provider it offers.
package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// Provider is one model vendor or server (openai, anthropic, ollama, ...).
type Provider interface {
	plugin.Component
	// Models lists the models the provider offers, with prices and limits.
	Models(ctx context.Context) ([]Model, error)
	// Chat streams one model turn to send, in order, ending with a Usage
	// and a Stop event. A failure the router can act on (rate limit,
	// overload, auth, ...) is returned as *Error.
	Chat(ctx context.Context, req Request, send func(Event) error) error
}

// Model describes one model. Prices are US dollars per million tokens.
type Model struct {
	ID                 string
	DisplayName        string
	ContextWindow      int64
	MaxOutputTokens    int64
	InputPricePerMTok  float64
	OutputPricePerMTok float64
	CacheReadPerMTok   float64
	CacheWritePerMTok  float64
	SupportsTools      bool
	SupportsThinking   bool
}

// Request is one model turn.
type Request struct {
	Model           string
	System          string
	Messages        []Message
	Tools           []ToolSpec
	MaxOutputTokens int64
	// Temperature is nil for the model's default.
	Temperature *float64
	// ThinkingBudget in tokens; zero disables extended thinking.
	ThinkingBudget int64
	// Seed asks for reproducible sampling where the vendor takes one;
	// nil sends none.
	Seed *int64
}

// Role is who said a message.
type Role string

// Roles of a conversation. Tool results travel in user messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one conversation message.
type Message struct {
	Role  Role
	Parts []Part
}

// Part is one piece of a message. Exactly one of its fields is set; a Part
// with only Text is text.
type Part struct {
	Text       string
	Thinking   *Thinking
	ToolCall   *ToolCall
	ToolResult *ToolResult
}

// Thinking is a model's reasoning, with the vendor's signature when it has
// one, so it can be sent back verbatim.
type Thinking struct {
	Text      string
	Signature string
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID            string
	Name          string
	ArgumentsJSON string
}

// ToolResult answers a ToolCall.
type ToolResult struct {
	CallID  string
	Content string
	IsError bool
}

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name            string
	Description     string
	InputSchemaJSON string
}

// Event is one streamed piece of a model turn. Exactly one field is set.
type Event struct {
	Text     string
	Thinking *Thinking
	ToolCall *ToolCallDelta
	Usage    *Usage
	Stop     StopReason
}

// ToolCallDelta is a fragment of a tool call. Index identifies the call
// within the turn; ID and Name arrive on its first fragment.
type ToolCallDelta struct {
	Index          int
	ID             string
	Name           string
	ArgumentsDelta string
}

// Usage counts the tokens of a turn.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
}

// StopReason is why a turn ended.
type StopReason string

// Stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
)

// ErrorClass is a typed failure the router uses to decide on retry and
// fallback.
type ErrorClass string

// Error classes.
const (
	ErrRateLimited    ErrorClass = "rate_limited"
	ErrOverloaded     ErrorClass = "overloaded"
	ErrServer         ErrorClass = "server"
	ErrTimeout        ErrorClass = "timeout"
	ErrAuth           ErrorClass = "auth"
	ErrBadRequest     ErrorClass = "bad_request"
	ErrContextTooLong ErrorClass = "context_too_long"
	ErrRefusal        ErrorClass = "refusal"
)

// Retryable reports whether the same request may succeed later.
func (c ErrorClass) Retryable() bool {
	return c == ErrRateLimited || c == ErrOverloaded || c == ErrServer || c == ErrTimeout
}

// Error is a provider failure with a class.
type Error struct {
	Class   ErrorClass
	Message string
	// RetryAfter is the vendor's hint, zero when it gave none.
	RetryAfter time.Duration
	// HTTPStatus is the vendor's status code, zero when not HTTP.
	HTTPStatus int
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Class, e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Class, e.Message)
}
