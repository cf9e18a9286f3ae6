package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// Approver answers calls the gate asks about: a TTY prompt, --yes, a
// surface, or the no-TTY refusal.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Approval, error)
}

// ApprovalRequest is what the user is asked.
type ApprovalRequest struct {
	ID      string
	CallID  string
	Tool    string
	Summary string
	Verdict gate.Verdict
}

// Approval is the answer.
type Approval struct {
	Approved bool
	// ForRun approves every like call for the rest of the run.
	ForRun bool
	// By says who answered: "user", "--yes", "no-tty", a surface principal.
	By     string
	Reason string
}

// ask puts a call to the Approver, publishing the request and the answer.
func (e *Engine) ask(ctx context.Context, p *prepared) (bool, string) {
	req := ApprovalRequest{ID: "ap-" + newToken()[:8], CallID: p.call.ID, Tool: p.call.Name,
		Summary: summarize(p.gcall), Verdict: p.verdict}
	e.publish(&event.ApprovalRequested{ApprovalID: req.ID, CallID: req.CallID, Tool: req.Tool,
		Summary: req.Summary, Risk: string(p.verdict.Risk), Verdict: verdictEvent(p.verdict)})
	a, err := e.o.Approver.Approve(ctx, req)
	if err != nil {
		a = Approval{By: "error", Reason: err.Error()}
	}
	scope := "once"
	if a.ForRun && a.Approved {
		scope = "run"
		e.mu.Lock()
		e.approved[approvalKey(p.gcall)] = true
		e.mu.Unlock()
	}
	e.publish(&event.ApprovalResolved{ApprovalID: req.ID, CallID: req.CallID, Approved: a.Approved,
		Scope: scope, By: a.By, Reason: a.Reason})
	if a.Approved {
		return true, "approved by " + a.By
	}
	why := "denied by " + a.By
	if a.Reason != "" {
		why += ": " + a.Reason
	}
	return false, why
}

func (e *Engine) runApproved(c gate.Call) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.approved[approvalKey(c)]
}

// approvalKey is what "always for this run" covers: the tool, and for
// commands the program they start with.
func approvalKey(c gate.Call) string {
	if c.Command == "" {
		return c.Tool
	}
	first, _, _ := strings.Cut(strings.TrimSpace(c.Command), " ")
	return c.Tool + "\x00" + first
}

// summarize is the one line the user sees when asked.
func summarize(c gate.Call) string {
	if c.Command != "" {
		return fmt.Sprintf("%s: %s", c.Tool, c.Command)
	}
	var parts []string
	for _, name := range c.PathArguments {
		if v, ok := c.Arguments[name].(string); ok {
			parts = append(parts, v)
		}
	}
	if len(parts) > 0 {
		return fmt.Sprintf("%s %s", c.Tool, strings.Join(parts, " "))
	}
	return c.Tool
}
