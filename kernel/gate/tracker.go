package gate

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sparrow-cli/sparrow/kernel/config"
)

// Loop limits: identical calls get a nudge at NudgeAt repeats and stop the
// run at StopAt; FailStopAt consecutive failures of the same call stop it.
const (
	NudgeAt    = 3
	StopAt     = 5
	FailStopAt = 3
)

// Tracker holds a run's stateful hard stops: turns, budget, repeated
// failures and stuck loops. The engine asks it before the Gate. Safe for
// concurrent use.
type Tracker struct {
	maxTurns  int
	maxUSD    float64
	maxTokens int64

	mu       sync.Mutex
	turns    int
	repeats  map[string]int
	failures map[string]int
	stopped  string
}

// NewTracker returns a tracker; zero limits mean none, and turns are
// capped at config.MaxTurnsCap whatever is asked.
func NewTracker(maxTurns int, maxUSD float64, maxTokens int64) *Tracker {
	if maxTurns <= 0 || maxTurns > config.MaxTurnsCap {
		maxTurns = config.MaxTurnsCap
	}
	return &Tracker{maxTurns: maxTurns, maxUSD: maxUSD, maxTokens: maxTokens,
		repeats: map[string]int{}, failures: map[string]int{}}
}

func stop(rule, reason string) Verdict {
	return Verdict{Decision: Deny, HardStop: true, Rule: "hard stop: " + rule, Reason: reason}
}

// Turn counts a model turn and stops the run past the limit.
func (t *Tracker) Turn() Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.turns >= t.maxTurns {
		return stop("max turns", fmt.Sprintf("the run reached its limit of %d turns", t.maxTurns))
	}
	t.turns++
	return Verdict{Decision: Allow}
}

// Spend checks the run's totals against the budget.
func (t *Tracker) Spend(usd float64, tokens int64) Verdict {
	switch {
	case t.maxUSD > 0 && usd > t.maxUSD:
		return stop("budget", fmt.Sprintf("the run has cost $%.4f, over its budget of $%.2f", usd, t.maxUSD))
	case t.maxTokens > 0 && tokens > t.maxTokens:
		return stop("budget", fmt.Sprintf("the run has used %d tokens, over its budget of %d", tokens, t.maxTokens))
	}
	return Verdict{Decision: Allow}
}

// key identifies a call by tool and exact arguments.
func key(c Call) string {
	b, _ := json.Marshal(c.Arguments) // map keys are sorted: a stable key
	return c.Tool + "\x00" + string(b)
}

// Check stops a call that repeats a stuck loop or keeps failing.
func (t *Tracker) Check(c Call) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key(c)
	switch {
	case t.repeats[k]+1 >= StopAt:
		return stop("stuck loop", fmt.Sprintf("%s was called with the same arguments %d times", c.Tool, StopAt))
	case t.failures[k] >= FailStopAt:
		return stop("repeated failures", fmt.Sprintf("%s failed %d times in a row with the same arguments", c.Tool, t.failures[k]))
	}
	return Verdict{Decision: Allow}
}

// Record notes a call's outcome and returns a nudge for the model when it
// starts repeating itself.
func (t *Tracker) Record(c Call, failed bool) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key(c)
	t.repeats[k]++
	if failed {
		t.failures[k]++
	} else {
		t.failures[k] = 0
	}
	if t.repeats[k] == NudgeAt {
		return fmt.Sprintf("[sparrow] You have called %s with the same arguments %d times. Try a different approach; at %d the run stops.",
			c.Tool, NudgeAt, StopAt)
	}
	return ""
}
