package event

import "encoding/json"

// RunStarted opens a run.
type RunStarted struct {
	Task           string  `json:"task"`
	Workspace      string  `json:"workspace"`
	Model          string  `json:"model"`
	Provider       string  `json:"provider"`
	Sandbox        string  `json:"sandbox"`
	Mode           string  `json:"mode"`
	Autonomy       float64 `json:"autonomy"`
	MaxTurns       int     `json:"max_turns"`
	SparrowVersion string  `json:"sparrow_version"`
	// SandboxProtections are the protections the sandbox backend has in
	// force for this run, one short phrase each ("landlock ABI 7");
	// absent for a backend that reports none.
	SandboxProtections []string `json:"sandbox_protections,omitempty"`
}

// RouteSelected says which model the router chose for the task and why.
type RouteSelected struct {
	Model    string `json:"model"`
	Provider string `json:"provider"`
	Reason   string `json:"reason"`
}

// ModelSwitched records a fallback from one model to the next.
type ModelSwitched struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Reason     string `json:"reason"`
	ErrorClass string `json:"error_class,omitempty"`
}

// ThinkingDelta is a piece of the model's visible reasoning.
type ThinkingDelta struct {
	Text string `json:"text"`
}

// Message is model or user text. While the model streams, Delta pieces
// arrive; the complete message follows with Delta false.
type Message struct {
	Role  string `json:"role"`
	Text  string `json:"text"`
	Delta bool   `json:"delta,omitempty"`
}

// ToolUseProposed is a tool call the model asked for, before the gate.
type ToolUseProposed struct {
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Risk      string          `json:"risk"`
}

// Verdict is the gate's decision on a call.
type Verdict struct {
	Decision        string `json:"decision"` // allow | ask | deny
	Reason          string `json:"reason"`
	Rule            string `json:"rule,omitempty"`
	NeedsCheckpoint bool   `json:"needs_checkpoint,omitempty"`
	Notify          bool   `json:"notify,omitempty"`
	HardStop        bool   `json:"hard_stop,omitempty"`
}

// ApprovalRequested asks a human about a call the gate would not decide.
type ApprovalRequested struct {
	ApprovalID string  `json:"approval_id"`
	CallID     string  `json:"call_id"`
	Tool       string  `json:"tool"`
	Summary    string  `json:"summary"`
	Risk       string  `json:"risk"`
	Verdict    Verdict `json:"verdict"`
}

// ApprovalResolved answers an ApprovalRequested.
type ApprovalResolved struct {
	ApprovalID string `json:"approval_id"`
	CallID     string `json:"call_id"`
	Approved   bool   `json:"approved"`
	// Scope is "once" or "run" (always, for the rest of this run).
	Scope string `json:"scope"`
	// By is who decided: "user", "--yes", "no-tty", a surface principal.
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

// ToolUseStarted is a call that passed the gate (or was refused by it:
// then Verdict.Decision is "deny" and no ToolOutput follows but the final
// one carrying the refusal).
type ToolUseStarted struct {
	CallID  string  `json:"call_id"`
	Tool    string  `json:"tool"`
	Verdict Verdict `json:"verdict"`
}

// ToolOutput streams a tool's output; the last one for a call has Final
// set and carries the result the model sees.
type ToolOutput struct {
	CallID     string `json:"call_id"`
	Text       string `json:"text"`
	Final      bool   `json:"final,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
}

// DiffProposed is an edit a tool is about to make.
type DiffProposed struct {
	CallID string `json:"call_id"`
	Path   string `json:"path"`
	Diff   string `json:"diff"`
}

// DiffApplied is an edit that was made.
type DiffApplied struct {
	CallID  string `json:"call_id"`
	Path    string `json:"path"`
	Diff    string `json:"diff"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// TestResult is the outcome of the verify command.
type TestResult struct {
	Command    []string `json:"command"`
	ExitCode   int      `json:"exit_code"`
	Passed     bool     `json:"passed"`
	Output     string   `json:"output"`
	DurationMS int64    `json:"duration_ms"`
	Attempt    int      `json:"attempt"`
}

// AgentSpawned records a sub-agent.
type AgentSpawned struct {
	AgentID string `json:"agent_id"`
	Parent  string `json:"parent"`
	Task    string `json:"task"`
}

// AgentStatus is a sub-agent's state change.
type AgentStatus struct {
	AgentID string `json:"agent_id"`
	Status  string `json:"status"`
}

// CheckpointCreated records a workspace snapshot.
type CheckpointCreated struct {
	ID  string `json:"id"`
	Ref string `json:"ref"`
	// Turn and Tool name the batch the snapshot was taken before: the
	// turn and its first changing call. Tool is empty for snapshots
	// taken at the start or end of a run.
	Turn int    `json:"turn,omitempty"`
	Tool string `json:"tool,omitempty"`
	// Reason is a short summary of what the batch is about to do.
	Reason string   `json:"reason"`
	Files  []string `json:"files,omitempty"`
	// Skipped are files left out of the snapshot for being over the size
	// cap; a rewind does not restore them.
	Skipped []string `json:"skipped,omitempty"`
}

// Compacted records a transcript compaction.
type Compacted struct {
	BeforeChars int `json:"before_chars"`
	AfterChars  int `json:"after_chars"`
}

// SkillLearned records a new skill.
type SkillLearned struct {
	Name string `json:"name"`
}

// CostUpdate is the run's spend after a model turn, in US dollars.
type CostUpdate struct {
	Model    string  `json:"model"`
	TurnUSD  float64 `json:"turn_usd"`
	TotalUSD float64 `json:"total_usd"`
	// Priced is false when the model has no known price.
	Priced bool `json:"priced"`
}

// TokenUsage counts a turn's tokens and the run's totals.
type TokenUsage struct {
	Model       string `json:"model"`
	Input       int64  `json:"input"`
	Output      int64  `json:"output"`
	CacheRead   int64  `json:"cache_read,omitempty"`
	CacheWrite  int64  `json:"cache_write,omitempty"`
	TotalInput  int64  `json:"total_input"`
	TotalOutput int64  `json:"total_output"`
}

// AutonomyChanged records a move of the autonomy dial.
type AutonomyChanged struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	By   string  `json:"by"`
}

// Run outcomes.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	StatusStopped   = "stopped" // a hard stop: budget, turns, repeated failures
)

// RunFinished closes a run.
type RunFinished struct {
	Status       string   `json:"status"`
	Reason       string   `json:"reason,omitempty"`
	Turns        int      `json:"turns"`
	DurationMS   int64    `json:"duration_ms"`
	CostUSD      float64  `json:"cost_usd"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	FilesChanged []string `json:"files_changed,omitempty"`
}

// Error reports a failure: Fatal ones end the run.
type Error struct {
	Message string `json:"message"`
	// Source is what failed: "provider", "tool", "plugin", "sandbox", "config", "engine".
	Source string `json:"source"`
	Class  string `json:"class,omitempty"`
	Fatal  bool   `json:"fatal,omitempty"`
}

// EventType implementations.
func (*RunStarted) EventType() Type        { return TypeRunStarted }
func (*RouteSelected) EventType() Type     { return TypeRouteSelected }
func (*ModelSwitched) EventType() Type     { return TypeModelSwitched }
func (*ThinkingDelta) EventType() Type     { return TypeThinkingDelta }
func (*Message) EventType() Type           { return TypeMessage }
func (*ToolUseProposed) EventType() Type   { return TypeToolUseProposed }
func (*ApprovalRequested) EventType() Type { return TypeApprovalRequested }
func (*ApprovalResolved) EventType() Type  { return TypeApprovalResolved }
func (*ToolUseStarted) EventType() Type    { return TypeToolUseStarted }
func (*ToolOutput) EventType() Type        { return TypeToolOutput }
func (*DiffProposed) EventType() Type      { return TypeDiffProposed }
func (*DiffApplied) EventType() Type       { return TypeDiffApplied }
func (*TestResult) EventType() Type        { return TypeTestResult }
func (*AgentSpawned) EventType() Type      { return TypeAgentSpawned }
func (*AgentStatus) EventType() Type       { return TypeAgentStatus }
func (*CheckpointCreated) EventType() Type { return TypeCheckpointCreated }
func (*Compacted) EventType() Type         { return TypeCompacted }
func (*SkillLearned) EventType() Type      { return TypeSkillLearned }
func (*CostUpdate) EventType() Type        { return TypeCostUpdate }
func (*TokenUsage) EventType() Type        { return TypeTokenUsage }
func (*AutonomyChanged) EventType() Type   { return TypeAutonomyChanged }
func (*RunFinished) EventType() Type       { return TypeRunFinished }
func (*Error) EventType() Type             { return TypeError }
