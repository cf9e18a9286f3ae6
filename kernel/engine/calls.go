package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// prepared is a tool call checked and gated, ready to run or refused.
type prepared struct {
	call    provider.ToolCall
	tool    tool.Tool
	gcall   gate.Call
	verdict gate.Verdict
	// result is set when the call will not run (bad call, denied).
	result *provider.ToolResult
}

// runCalls gates and executes one turn's tool calls and returns their
// results in call order, and a reason when the run must stop.
func (e *Engine) runCalls(ctx context.Context, calls []provider.ToolCall) ([]provider.Part, string) {
	preps := make([]*prepared, len(calls))
	stop := ""
	for i, c := range calls {
		p := e.prepare(ctx, c)
		preps[i] = p
		if p.verdict.HardStop && stop == "" {
			stop = p.verdict.Reason
		}
	}
	cpID := e.checkpoint(ctx, preps)
	// Read-only calls that passed run concurrently; the rest run one by
	// one, in the order the model gave them.
	var wg sync.WaitGroup
	for _, p := range preps {
		if p.result == nil && p.tool.Spec().Risk == tool.RiskReadOnly && p.verdict.Risk == tool.RiskReadOnly {
			wg.Go(func() { e.execute(ctx, p) })
		}
	}
	wg.Wait()
	for _, p := range preps {
		if p.result == nil {
			e.execute(ctx, p)
		}
	}
	e.rollbackFailed(ctx, cpID, preps)
	parts := make([]provider.Part, len(preps))
	for i, p := range preps {
		parts[i] = provider.Part{ToolResult: p.result}
	}
	return parts, stop
}

// prepare validates a call and asks the gate (and the user, when the gate
// asks). A call that will not run gets its result here.
func (e *Engine) prepare(ctx context.Context, c provider.ToolCall) *prepared {
	p := &prepared{call: c}
	refuse := func(format string, args ...any) *prepared {
		p.result = &provider.ToolResult{CallID: c.ID, Content: fmt.Sprintf(format, args...), IsError: true}
		e.publish(&event.ToolOutput{CallID: c.ID, Text: p.result.Content, Final: true, IsError: true})
		return p
	}
	p.tool = e.findTool(c.Name)
	risk := ""
	if p.tool != nil {
		risk = string(p.tool.Spec().Risk)
	}
	args := json.RawMessage(c.ArgumentsJSON)
	if !json.Valid(args) {
		args, _ = json.Marshal(c.ArgumentsJSON)
	}
	e.publish(&event.ToolUseProposed{CallID: c.ID, Tool: c.Name, Arguments: args, Risk: risk})
	if p.tool == nil {
		return refuse("There is no tool named %q. Available tools: %s.", c.Name, strings.Join(e.toolNames(), ", "))
	}
	spec := p.tool.Spec()
	decoded, err := validateArguments(spec, c.ArgumentsJSON)
	if err != nil {
		return refuse("Invalid arguments for %s: %v. Check the tool's schema and try again.", c.Name, err)
	}
	p.gcall = gate.Call{Tool: spec.Name, Risk: spec.Risk, Arguments: decoded, PathArguments: spec.PathArguments}
	if cmd, ok := decoded["command"].(string); ok {
		p.gcall.Command = cmd
	}
	p.verdict = e.o.Tracker.Check(p.gcall)
	if p.verdict.Decision != gate.Deny {
		p.verdict = e.o.Gate.Decide(p.gcall)
	}
	if p.verdict.Decision == gate.Ask {
		if e.runApproved(p.gcall) {
			p.verdict.Decision, p.verdict.Reason = gate.Allow, "approved for this run"
		} else if ok, why := e.ask(ctx, p); ok {
			p.verdict.Decision, p.verdict.Reason = gate.Allow, why
		} else {
			p.verdict.Decision, p.verdict.Reason = gate.Deny, why
		}
	}
	if p.verdict.Decision == gate.Deny {
		e.publish(&event.ToolUseStarted{CallID: c.ID, Tool: c.Name, Verdict: verdictEvent(p.verdict)})
		return refuse("Sparrow did not run this call: %s (%s).", p.verdict.Reason, p.verdict.Rule)
	}
	return p
}

// execute runs an allowed call through its tool plugin.
func (e *Engine) execute(ctx context.Context, p *prepared) {
	c := p.call
	e.publish(&event.ToolUseStarted{CallID: c.ID, Tool: c.Name, Verdict: verdictEvent(p.verdict)})
	token := newToken()
	e.mu.Lock()
	e.grants[token] = &grant{tool: c.Name, command: p.gcall.Command, callID: c.ID, network: p.verdict.Network}
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.grants, token)
		e.mu.Unlock()
	}()
	if p.verdict.NeedsCheckpoint {
		e.mu.Lock()
		e.touched = true
		e.mu.Unlock()
	}
	start := time.Now()
	res, err := p.tool.Invoke(ctx, &tool.Call{
		ID: c.ID, Arguments: json.RawMessage(c.ArgumentsJSON), Workspace: e.o.Workspace,
		Output: outputWriter{e: e, callID: c.ID}, Token: token,
	})
	if err != nil {
		res = tool.Result{Content: fmt.Sprintf("The tool failed: %v", err), IsError: true}
		e.publish(&event.Error{Source: "tool", Message: fmt.Sprintf("%s: %v", c.Name, err)})
	}
	e.recordDiff(c.ID, res.Metadata)
	if nudge := e.o.Tracker.Record(p.gcall, res.IsError); nudge != "" {
		res.Content += "\n\n" + nudge
	}
	if e.o.Redact != nil {
		res.Content = e.o.Redact(res.Content)
	}
	p.result = &provider.ToolResult{CallID: c.ID, Content: res.Content, IsError: res.IsError}
	e.publish(&event.ToolOutput{CallID: c.ID, Text: res.Content, Final: true, IsError: res.IsError,
		DurationMS: time.Since(start).Milliseconds()})
}

// recordDiff publishes DiffApplied for tools that report an edit in their
// metadata ({"path","diff","added","removed"}).
func (e *Engine) recordDiff(callID string, meta json.RawMessage) {
	if len(meta) == 0 {
		return
	}
	var d struct {
		Path    string `json:"path"`
		Diff    string `json:"diff"`
		Added   int    `json:"added"`
		Removed int    `json:"removed"`
	}
	if json.Unmarshal(meta, &d) != nil || d.Path == "" || d.Diff == "" {
		return
	}
	e.mu.Lock()
	e.changed[d.Path] = true
	e.mu.Unlock()
	e.publish(&event.DiffApplied{CallID: callID, Path: d.Path, Diff: d.Diff, Added: d.Added, Removed: d.Removed})
}

// outputWriter streams a tool's progress as ToolOutput events.
type outputWriter struct {
	e      *Engine
	callID string
}

func (w outputWriter) Write(p []byte) (int, error) {
	w.e.publish(&event.ToolOutput{CallID: w.callID, Text: string(p)})
	return len(p), nil
}

func (e *Engine) findTool(name string) tool.Tool {
	for _, t := range e.o.Tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func (e *Engine) toolNames() []string {
	names := make([]string, 0, len(e.o.Tools))
	for _, t := range e.o.Tools {
		names = append(names, t.Spec().Name)
	}
	sort.Strings(names)
	return names
}

func verdictEvent(v gate.Verdict) event.Verdict {
	return event.Verdict{Decision: string(v.Decision), Reason: v.Reason, Rule: v.Rule,
		NeedsCheckpoint: v.NeedsCheckpoint, Notify: v.Notify, HardStop: v.HardStop}
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkpoint snapshots the workspace once before a batch holding calls
// that may change it. Without a snapshot those calls do not run: nothing
// mutating runs without a way back.
func (e *Engine) checkpoint(ctx context.Context, preps []*prepared) string {
	var first *prepared
	for _, p := range preps {
		if p.result == nil && p.verdict.NeedsCheckpoint {
			first = p
			break
		}
	}
	if first == nil || e.o.Checkpoints == nil {
		return ""
	}
	e.mu.Lock()
	turn := e.turns
	e.mu.Unlock()
	id, err := e.snapshot(ctx, CheckpointRequest{Turn: turn, Tool: first.call.Name, Summary: "before " + summarize(first.gcall)})
	if err == nil {
		return id
	}
	for _, p := range preps {
		if p.result == nil && p.verdict.NeedsCheckpoint {
			p.result = &provider.ToolResult{CallID: p.call.ID, IsError: true,
				Content: "Sparrow did not run this call: the workspace could not be checkpointed first (" + err.Error() + ")."}
			e.publish(&event.ToolOutput{CallID: p.call.ID, Text: p.result.Content, Final: true, IsError: true})
		}
	}
	return ""
}

// snapshot takes one checkpoint between the hooks and announces it; a
// failure is published and returned.
func (e *Engine) snapshot(ctx context.Context, req CheckpointRequest) (string, error) {
	if h := e.o.Hooks.PreCheckpoint; h != nil {
		if err := h(ctx, req); err != nil {
			err = fmt.Errorf("pre-checkpoint hook: %w", err)
			e.publish(&event.Error{Source: "checkpoint", Message: err.Error()})
			return "", err
		}
	}
	info, err := e.o.Checkpoints.Checkpoint(ctx, req)
	if err != nil {
		e.publish(&event.Error{Source: "checkpoint", Message: err.Error()})
		return "", err
	}
	e.publish(&event.CheckpointCreated{ID: info.ID, Ref: info.Ref, Turn: req.Turn, Tool: req.Tool,
		Reason: req.Summary, Skipped: info.Skipped})
	if len(info.Skipped) > 0 {
		e.publish(&event.Error{Source: "checkpoint", Message: fmt.Sprintf(
			"checkpoint %s left out %d file(s) over the size cap (checkpoints.max_file_mb); rewind will not restore them: %s",
			info.ID, len(info.Skipped), strings.Join(clipList(info.Skipped, 5), ", "))})
	}
	if h := e.o.Hooks.PostCheckpoint; h != nil {
		h(ctx, req, info)
	}
	return info.ID, nil
}

// clipList keeps the first n names and says how many more there are.
func clipList(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(names[:n:n], fmt.Sprintf("and %d more", len(names)-n))
}

// rollbackFailed restores the batch's checkpoint when a call that may
// have changed the workspace failed, and tells the model.
func (e *Engine) rollbackFailed(ctx context.Context, cpID string, preps []*prepared) {
	if cpID == "" || e.o.KeepFailedBatches || ctx.Err() != nil {
		return
	}
	var failed []*prepared
	for _, p := range preps {
		if p.verdict.NeedsCheckpoint && p.verdict.Decision == gate.Allow && p.result != nil && p.result.IsError {
			failed = append(failed, p)
		}
	}
	if len(failed) == 0 {
		return
	}
	note := fmt.Sprintf("\n\n[sparrow] This batch failed, so the workspace was rolled back to checkpoint %s: every change the batch made is undone.", cpID)
	if err := e.o.Checkpoints.Rollback(ctx, cpID); err != nil {
		e.publish(&event.Error{Source: "checkpoint", Message: fmt.Sprintf("roll back to %s: %v", cpID, err)})
		return
	}
	e.publish(&event.Error{Source: "checkpoint", Message: fmt.Sprintf("a call of the batch failed; the workspace was rolled back to %s", cpID)})
	e.mu.Lock()
	for k := range e.changed {
		delete(e.changed, k)
	}
	e.mu.Unlock()
	for _, p := range failed {
		p.result.Content += note
	}
}
