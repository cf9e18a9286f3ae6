package gate

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sparrow-cli/sparrow/kernel/config"
)

// Loop limits. Identical calls (same tool, same arguments) get a nudge at
// NudgeAt and stop the run at StopAt, whatever their outcome; the same
// call failing FailStopAt times in a row stops the run.
const (
	NudgeAt    = 3
	StopAt     = 5
	FailStopAt = 3
)

// Tracker holds one run's stateful hard stops: model turns, budget,
// repeated failures, stuck loops and sandbox escapes. It is safe for
// concurrent use.
//
// How the engine combines it with the Gate:
//   - before each model turn: Turn(); a hard stop ends the run;
//   - after each model reply: Spend(total USD, total tokens);
//   - before each tool call: Check(call); only if that allows, then
//     Gate.Decide(call);
//   - after each executed call: Record(call, failed), appending any
//     nudge to the result the model sees.
//
// Once a hard stop has fired it is latched: every later Turn, Spend and
// Check returns it, so a stop found while recording (the third failure)
// ends the run at the next step.
type Tracker struct {
	maxTurns  int
	maxUSD    float64
	maxTokens int64

	mu       sync.Mutex
	turns    int
	repeats  map[string]int
	failures map[string]int
	stopped  *Verdict
}

// NewTracker returns a tracker. maxTurns outside 1..config.MaxTurnsCap
// means the cap (60); a zero maxUSD or maxTokens means no limit.
func NewTracker(maxTurns int, maxUSD float64, maxTokens int64) *Tracker {
	if maxTurns <= 0 || maxTurns > config.MaxTurnsCap {
		maxTurns = config.MaxTurnsCap
	}
	return &Tracker{maxTurns: maxTurns, maxUSD: maxUSD, maxTokens: maxTokens,
		repeats: map[string]int{}, failures: map[string]int{}}
}

// TrackerFromConfig returns a tracker for the budget block.
func TrackerFromConfig(b config.Budget) *Tracker {
	return NewTracker(b.MaxTurns, b.MaxUSD, int64(b.MaxTokens))
}

// MaxTurns is the effective turn limit.
func (t *Tracker) MaxTurns() int { return t.maxTurns }

// allowed is the verdict of a check that found nothing wrong.
func allowed() Verdict {
	return Verdict{Decision: Allow, Rule: "tracker", Reason: "within the run's limits"}
}

// latch records a hard stop and returns it. Callers hold t.mu.
func (t *Tracker) latch(rule, reason string) Verdict {
	if t.stopped == nil {
		t.stopped = &Verdict{Decision: Deny, HardStop: true, Rule: "hard stop: " + rule, Reason: reason}
	}
	return *t.stopped
}

// Stopped returns the latched hard stop, if any.
func (t *Tracker) Stopped() (Verdict, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped == nil {
		return Verdict{}, false
	}
	return *t.stopped, true
}

// Turn counts a model turn; the turn past the limit is a hard stop.
func (t *Tracker) Turn() Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped != nil {
		return *t.stopped
	}
	if t.turns >= t.maxTurns {
		return t.latch("max turns", fmt.Sprintf("the run reached its limit of %d turns", t.maxTurns))
	}
	t.turns++
	return allowed()
}

// Spend checks the run's running totals against the budget; going over
// max_usd or max_tokens is a hard stop.
func (t *Tracker) Spend(totalUSD float64, totalTokens int64) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.stopped != nil:
		return *t.stopped
	case t.maxUSD > 0 && totalUSD > t.maxUSD:
		return t.latch("budget", fmt.Sprintf("the run has cost $%.4f, over its budget of $%.2f", totalUSD, t.maxUSD))
	case t.maxTokens > 0 && totalTokens > t.maxTokens:
		return t.latch("budget", fmt.Sprintf("the run has used %d tokens, over its budget of %d", totalTokens, t.maxTokens))
	}
	return allowed()
}

// Escape reports a sandbox escape signal (a backend saw a process leave
// its confinement); it is a hard stop.
func (t *Tracker) Escape(detail string) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latch("sandbox escape", "the sandbox reported an escape attempt: "+detail)
}

// callKey identifies a call by tool and exact arguments.
func callKey(c Call) string {
	b, err := json.Marshal(c.Arguments) // map keys are sorted: a stable key
	if err != nil {
		b = fmt.Appendf(nil, "%#v", c.Arguments)
	}
	return c.Tool + "\x00" + c.Command + "\x00" + string(b)
}

// Check is consulted before the Gate: it returns a latched hard stop
// (max turns, budget, repeated failures, escape), or stops the StopAt-th
// identical call before it runs.
func (t *Tracker) Check(c Call) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped != nil {
		return *t.stopped
	}
	k := callKey(c)
	if t.repeats[k]+1 >= StopAt {
		return t.latch("stuck loop", fmt.Sprintf("%s was called with the same arguments %d times", c.Tool, StopAt))
	}
	return allowed()
}

// Record notes an executed call's outcome. It returns a nudge for the
// model at the NudgeAt-th identical call, and latches a hard stop at the
// FailStopAt-th consecutive failure of the same call (a success of that
// call resets its count; other calls in between do not).
func (t *Tracker) Record(c Call, failed bool) (nudge string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := callKey(c)
	t.repeats[k]++
	if failed {
		t.failures[k]++
	} else {
		t.failures[k] = 0
	}
	if t.failures[k] >= FailStopAt {
		t.latch("repeated failures", fmt.Sprintf("%s failed %d times in a row with the same arguments", c.Tool, t.failures[k]))
	}
	if t.repeats[k] == NudgeAt {
		return fmt.Sprintf("[sparrow] You have called %s with the same arguments %d times; try something else. At %d the run stops.",
			c.Tool, NudgeAt, StopAt)
	}
	return ""
}
