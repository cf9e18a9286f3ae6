package engine

import (
	"context"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// CallTool is a run of one tool call and no model: `sparrow tool call`.
// The call takes the path a model's call takes — arguments checked
// against the schema, the run's budget, the gate (and the Approver when
// the gate asks), a checkpoint when it may change the workspace, the
// tool, redaction — and the run is recorded like any other, so rewind
// and replay work on it. The result is what a model would have seen.
func (e *Engine) CallTool(ctx context.Context, name, argumentsJSON string) (provider.ToolResult, Result, error) {
	e.started("")
	e.mu.Lock()
	e.turns = 1
	e.mu.Unlock()
	parts, stop := e.runCalls(ctx, []provider.ToolCall{{ID: "call_1", Name: name, ArgumentsJSON: argumentsJSON}})
	res := *parts[0].ToolResult
	status, reason := event.StatusCompleted, ""
	switch {
	case stop != "":
		status, reason = event.StatusStopped, stop
	case res.IsError:
		status = event.StatusFailed
		reason, _, _ = strings.Cut(res.Content, "\n")
	}
	r, err := e.finish(ctx, status, reason)
	return res, r, err
}
