// Package replay defines the conversation file the replay provider serves
// (one recorded model response per turn) and builds one from a run's
// recorded events, so any recording can be re-executed with its model's
// answers played back.
//
// A conversation file is JSON:
//
//	{"model": "replay-1", "turns": [
//	  {"expect": "optional substring of the last user message or tool result",
//	   "events": [{"thinking": "…"}, {"text": "…"},
//	              {"tool_call": {"id": "c1", "name": "read_file", "arguments": {"path": "x"}}},
//	              {"usage": {"input": 10, "output": 5}}, {"stop": "tool_use"}]}]}
//
// A turn may instead carry {"error": {"class": "rate_limited", "message": "…",
// "retry_after_ms": 100, "http_status": 429}} to replay a provider failure.
package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Conversation is a recorded sequence of model turns.
type Conversation struct {
	Model string `json:"model"`
	Turns []Turn `json:"turns"`
}

// Turn is one recorded model response.
type Turn struct {
	// Expect, when set, must occur in the request's last message; a replay
	// that has drifted from its recording stops instead of misleading.
	Expect string      `json:"expect,omitempty"`
	Events []TurnEvent `json:"events,omitempty"`
	Error  *TurnError  `json:"error,omitempty"`
}

// TurnEvent is one streamed piece; exactly one field is set.
type TurnEvent struct {
	Text     string         `json:"text,omitempty"`
	Thinking string         `json:"thinking,omitempty"`
	ToolCall *RecordedCall  `json:"tool_call,omitempty"`
	Usage    *RecordedUsage `json:"usage,omitempty"`
	Stop     string         `json:"stop,omitempty"`
}

// RecordedCall is a whole tool call.
type RecordedCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// RecordedUsage counts tokens.
type RecordedUsage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// TurnError replays a provider failure.
type TurnError struct {
	Class        string `json:"class"`
	Message      string `json:"message"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	HTTPStatus   int    `json:"http_status,omitempty"`
}

// Load reads and checks a conversation file.
func Load(path string) (*Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return Parse(path, b)
}

// Parse decodes and checks a conversation read from path. Unknown fields
// are errors: a typo must not silently drop a turn's content.
func Parse(path string, b []byte) (*Conversation, error) {
	var conv Conversation
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conv); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if len(conv.Turns) == 0 {
		return nil, fmt.Errorf("replay: %s has no turns", path)
	}
	for i, t := range conv.Turns {
		if (t.Error == nil) == (len(t.Events) == 0) {
			return nil, fmt.Errorf("replay: %s: turn %d needs events or an error, not both", path, i+1)
		}
	}
	return &conv, nil
}

// Write saves the conversation as path, through a temporary file renamed
// into place.
func (c *Conversation) Write(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode conversation: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write conversation: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write conversation: %w", err)
	}
	return nil
}
