package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Publisher is the run's event bus as the engine uses it.
type Publisher interface {
	Publish(agentID string, p event.Payload) (event.Event, error)
}

// Route is one model to try, with the provider that serves it.
type Route struct {
	// Name is the model's name in config (or its id).
	Name     string
	Provider provider.Provider
	// ProviderName is the provider's component name, for events.
	ProviderName string
	// Model is the vendor's model id.
	Model string
	Price Price
	// Seed is sent with every request to this model; nil sends none.
	Seed *int64
}

// Price is US dollars per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
	Known                                bool
}

// Options configure one run. Every field without a default is required.
type Options struct {
	RunID     string
	Task      string
	Workspace string
	// Routes are the model and its fallbacks, tried in order on rate
	// limits, overload, server errors, timeouts and refusals.
	Routes []Route
	Tools  []tool.Tool
	// Sandbox runs every command; Session is its prepared workspace.
	Sandbox sandbox.Sandbox
	Session sandbox.Session
	Bus     Publisher
	Gate    *gate.Gate
	Tracker *gate.Tracker
	// Approver answers calls the gate asks about.
	Approver Approver
	// System is the assembled system prompt (see Context).
	System string
	// MaxOutputTokens per turn; zero is the provider's default.
	MaxOutputTokens int64
	// VerifyCommand runs after a run that changed files; VerifyAttempts
	// bounds how often a failure goes back to the model (default 2).
	VerifyCommand  []string
	VerifyAttempts int
	// ExecTimeout bounds one command run through Host (default 10 min).
	ExecTimeout time.Duration
	// Info fills RunStarted.
	Info RunInfo
	// Checkpoints snapshots the workspace before every batch that may
	// change it; nil disables checkpoints (tests only).
	Checkpoints Checkpointer
	// KeepFailedBatches leaves the workspace as a failed batch left it;
	// by default it is rolled back to the batch's checkpoint.
	KeepFailedBatches bool
	// Hooks attach extensions to the loop.
	Hooks Hooks
	// Redact hides secrets in tool results before the model sees them
	// (the bus redacts events on its own). Nil leaves results as they are.
	Redact func(string) string
}

// Checkpointer snapshots the workspace.
type Checkpointer interface {
	// Checkpoint snapshots the workspace.
	Checkpoint(ctx context.Context, req CheckpointRequest) (CheckpointInfo, error)
	// Rollback restores the workspace to checkpoint id.
	Rollback(ctx context.Context, id string) error
}

// CheckpointRequest says why a snapshot is taken: before the batch whose
// first changing call is Tool in Turn, or at the end of the run (Tool "").
type CheckpointRequest struct {
	Turn    int
	Tool    string
	Summary string
}

// CheckpointInfo is a snapshot taken.
type CheckpointInfo struct {
	ID, Ref string
	// Skipped are files left out for being over the size cap.
	Skipped []string
}

// Hooks are points where extensions attach to the loop; nil hooks are
// skipped.
type Hooks struct {
	// PreCheckpoint runs before a batch's snapshot; an error stops the
	// batch's changing calls, as a failed snapshot does.
	PreCheckpoint func(ctx context.Context, req CheckpointRequest) error
	// PostCheckpoint runs after a snapshot was taken.
	PostCheckpoint func(ctx context.Context, req CheckpointRequest, info CheckpointInfo)
}

// RunInfo is descriptive data for RunStarted.
type RunInfo struct {
	Provider, Sandbox, Mode, SparrowVersion string
	Autonomy                                float64
	MaxTurns                                int
	// SandboxProtections are what the sandbox reported in force
	// (sandbox.Capabilities.Protections).
	SandboxProtections []string
}

// Result sums up a finished run.
type Result struct {
	Status       string
	Reason       string
	Turns        int
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	FilesChanged []string
	Duration     time.Duration
}

// Engine runs one run. Create it with New; HostExec serves the plugins'
// Host service for it.
type Engine struct {
	o     Options
	start time.Time

	mu       sync.Mutex
	grants   map[string]*grant // host token → the call it was issued for
	approved map[string]bool   // "tool\x00command" approved for the whole run
	changed  map[string]bool
	cost     float64
	in, out  int64
	turns    int
	busErr   error
	// touched is set once a call that may change the workspace ran.
	touched bool
}

// New checks opts and returns an Engine.
func New(o Options) (*Engine, error) {
	switch {
	case o.RunID == "" || o.Task == "" || o.Workspace == "":
		return nil, errors.New("engine: run id, task and workspace are required")
	case o.Sandbox == nil || o.Bus == nil || o.Gate == nil || o.Tracker == nil || o.Approver == nil:
		return nil, errors.New("engine: sandbox, bus, gate, tracker and approver are required")
	}
	if o.VerifyAttempts <= 0 {
		o.VerifyAttempts = 2
	}
	if o.ExecTimeout <= 0 {
		o.ExecTimeout = 10 * time.Minute
	}
	return &Engine{o: o, grants: map[string]*grant{}, approved: map[string]bool{}, changed: map[string]bool{}}, nil
}

func (e *Engine) publish(p event.Payload) {
	// A failed publish means the recorder could not write; the run cannot
	// be trusted to continue unrecorded, so it is surfaced by finish.
	if _, err := e.o.Bus.Publish("main", p); err != nil {
		e.mu.Lock()
		e.busErr = errors.Join(e.busErr, err)
		e.mu.Unlock()
	}
}

// Run executes the run to its end and publishes RunFinished last. The
// returned error is non-nil only when the run could not be recorded.
func (e *Engine) Run(ctx context.Context) (Result, error) {
	if len(e.o.Routes) == 0 {
		return Result{}, errors.New("engine: no model to run")
	}
	first := e.o.Routes[0]
	e.started(first.Name)
	e.publish(&event.RouteSelected{Model: first.Name, Provider: e.o.Info.Provider, Reason: "configured model"})
	status, reason := e.loop(ctx)
	return e.finish(ctx, status, reason)
}

// started marks the run's start and publishes RunStarted.
func (e *Engine) started(model string) {
	e.start = time.Now()
	e.publish(&event.RunStarted{
		Task: e.o.Task, Workspace: e.o.Workspace, Model: model, Provider: e.o.Info.Provider,
		Sandbox: e.o.Info.Sandbox, Mode: e.o.Info.Mode, Autonomy: e.o.Info.Autonomy,
		MaxTurns: e.o.Info.MaxTurns, SparrowVersion: e.o.Info.SparrowVersion,
		SandboxProtections: e.o.Info.SandboxProtections,
	})
}

func (e *Engine) finish(ctx context.Context, status, reason string) (Result, error) {
	// A snapshot of where the run left the workspace: rewind compares
	// against it to tell the user's own later edits from the run's.
	if e.o.Checkpoints != nil && e.mutated() {
		_, _ = e.snapshot(context.WithoutCancel(ctx), CheckpointRequest{Turn: e.turns, Summary: "end of run"})
	}
	if ctx.Err() != nil && status != event.StatusCompleted {
		status, reason = event.StatusCancelled, "cancelled by the user"
	}
	e.mu.Lock()
	r := Result{Status: status, Reason: reason, Turns: e.turns, InputTokens: e.in, OutputTokens: e.out,
		CostUSD: e.cost, FilesChanged: sortedKeys(e.changed), Duration: time.Since(e.start)}
	e.mu.Unlock()
	e.publish(&event.RunFinished{Status: r.Status, Reason: r.Reason, Turns: r.Turns, DurationMS: r.Duration.Milliseconds(),
		CostUSD: r.CostUSD, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, FilesChanged: r.FilesChanged})
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busErr != nil {
		return r, fmt.Errorf("record run: %w", e.busErr)
	}
	return r, nil
}
