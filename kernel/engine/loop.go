package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// loop runs turns until the model is done or something stops the run.
func (e *Engine) loop(ctx context.Context) (status, reason string) {
	msgs := []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: e.o.Task}}}}
	route, verified := 0, 0
	for {
		if ctx.Err() != nil {
			return event.StatusCancelled, "cancelled by the user"
		}
		if v := e.o.Tracker.Turn(); v.HardStop {
			return event.StatusStopped, v.Reason
		}
		e.mu.Lock()
		e.turns++
		turn := e.turns
		e.mu.Unlock()
		rep, err := e.chat(ctx, &route, msgs)
		if err != nil {
			if ctx.Err() != nil {
				return event.StatusCancelled, "cancelled by the user"
			}
			e.publish(&event.Error{Source: "provider", Class: errorClass(err), Message: err.Error(), Fatal: true})
			return event.StatusFailed, err.Error()
		}
		calls := rep.toolCalls(turn)
		msgs = append(msgs, rep.message(calls))
		e.mu.Lock()
		spent := e.cost
		e.mu.Unlock()
		if v := e.o.Tracker.Spend(spent, e.in+e.out); v.HardStop {
			return event.StatusStopped, v.Reason
		}
		if len(calls) == 0 {
			if e.mutated() && len(e.o.VerifyCommand) > 0 && verified < e.o.VerifyAttempts {
				verified++
				passed, output := e.verify(ctx, verified)
				if !passed && verified < e.o.VerifyAttempts {
					msgs = append(msgs, provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Text: fmt.Sprintf(
						"The verify command `%s` failed:\n\n%s\n\nFix the problem, then say when you are done.",
						strings.Join(e.o.VerifyCommand, " "), output)}}})
					continue
				}
				if !passed {
					return event.StatusFailed, "the verify command still fails after " + fmt.Sprint(verified) + " attempts"
				}
			}
			return event.StatusCompleted, ""
		}
		results, stop := e.runCalls(ctx, calls)
		msgs = append(msgs, provider.Message{Role: provider.RoleUser, Parts: results})
		if stop != "" {
			return event.StatusStopped, stop
		}
	}
}

func errorClass(err error) string {
	if perr, ok := err.(*provider.Error); ok {
		return string(perr.Class)
	}
	return ""
}

// mutated reports whether the run may have changed the workspace: a
// recorded edit, or any mutating, exec or destructive call that ran.
func (e *Engine) mutated() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.changed) > 0 || e.touched
}

// verify runs the configured verify command in the sandbox and publishes
// its TestResult.
func (e *Engine) verify(ctx context.Context, attempt int) (bool, string) {
	var out tailBuffer
	out.max = 16 << 10
	start := time.Now()
	exit, err := e.o.Sandbox.Exec(ctx, sandbox.ExecRequest{
		SessionID: e.o.Session.ID, Argv: e.o.VerifyCommand, Workdir: e.o.Session.Workdir,
		Limits: sandbox.Limits{Timeout: e.o.ExecTimeout},
	}, sandbox.IO{Stdout: &out, Stderr: &out})
	code := exit.Code
	if err != nil {
		fmt.Fprintf(&out, "\nsparrow: %v", err)
		code = -1
	}
	passed := err == nil && exit.Code == 0
	e.publish(&event.TestResult{Command: e.o.VerifyCommand, ExitCode: code, Passed: passed,
		Output: out.String(), DurationMS: time.Since(start).Milliseconds(), Attempt: attempt})
	return passed, out.String()
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.cut {
		return "[… earlier output omitted …]\n" + string(t.buf)
	}
	return string(t.buf)
}
