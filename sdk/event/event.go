// Package event is Sparrow's event model: the one stream every surface
// renders, the recorder writes and `--json` prints, one event a line.
//
// The JSON shape is a public, versioned contract (docs/events.md):
//
//	{"v":1,"run_id":"r-…","agent_id":"main","seq":7,"time":"…","type":"ToolUseProposed","data":{…}}
//
// Adding a field to a payload is compatible; renaming or removing one, or
// changing its meaning, bumps SchemaVersion.
package event

import (
	"encoding/json"
	"fmt"
	"time"
)

// SchemaVersion is the version of the event JSON shape.
const SchemaVersion = 1

// Type names an event.
type Type string

// Event types.
const (
	TypeRunStarted        Type = "RunStarted"
	TypeRouteSelected     Type = "RouteSelected"
	TypeModelSwitched     Type = "ModelSwitched"
	TypeThinkingDelta     Type = "ThinkingDelta"
	TypeMessage           Type = "Message"
	TypeToolUseProposed   Type = "ToolUseProposed"
	TypeApprovalRequested Type = "ApprovalRequested"
	TypeApprovalResolved  Type = "ApprovalResolved"
	TypeToolUseStarted    Type = "ToolUseStarted"
	TypeToolOutput        Type = "ToolOutput"
	TypeDiffProposed      Type = "DiffProposed"
	TypeDiffApplied       Type = "DiffApplied"
	TypeTestResult        Type = "TestResult"
	TypeAgentSpawned      Type = "AgentSpawned"
	TypeAgentStatus       Type = "AgentStatus"
	TypeCheckpointCreated Type = "CheckpointCreated"
	TypeCompacted         Type = "Compacted"
	TypeSkillLearned      Type = "SkillLearned"
	TypeCostUpdate        Type = "CostUpdate"
	TypeTokenUsage        Type = "TokenUsage"
	TypeAutonomyChanged   Type = "AutonomyChanged"
	TypeRunFinished       Type = "RunFinished"
	TypeError             Type = "Error"
)

// Payload is the type-specific part of an event.
type Payload interface {
	// EventType names the payload's event type.
	EventType() Type
}

// Event is one entry of the stream. The bus stamps the header (version,
// run, agent, sequence, time); producers supply Payload.
type Event struct {
	SchemaVersion int       `json:"v"`
	RunID         string    `json:"run_id"`
	AgentID       string    `json:"agent_id"`
	Seq           uint64    `json:"seq"`
	Time          time.Time `json:"time"`
	Type          Type      `json:"type"`
	Payload       Payload   `json:"-"`
	// Prev is set in recordings only: "sha256:<hex>" of the previous line
	// of events.jsonl (empty for the first), so any edit, insertion or
	// removal breaks the chain.
	Prev string `json:"-"`
}

// wire is Event as JSON: the payload under "data".
type wire struct {
	SchemaVersion int             `json:"v"`
	RunID         string          `json:"run_id"`
	AgentID       string          `json:"agent_id"`
	Seq           uint64          `json:"seq"`
	Time          time.Time       `json:"time"`
	Type          Type            `json:"type"`
	Data          json.RawMessage `json:"data"`
	Prev          string          `json:"prev,omitempty"`
}

// MarshalJSON writes the public shape.
func (e Event) MarshalJSON() ([]byte, error) { return e.marshal(false) }

// UnmarshalJSON reads the public shape, decoding data into the payload
// type the event names. An unknown type from a newer Sparrow decodes to
// *Unknown rather than failing, so old readers keep working.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type == "" {
		return fmt.Errorf("event without a type")
	}
	if w.SchemaVersion > SchemaVersion {
		return fmt.Errorf("event schema v%d is newer than this Sparrow (v%d)", w.SchemaVersion, SchemaVersion)
	}
	p := New(w.Type)
	if p == nil {
		p = &Unknown{Name: w.Type}
	}
	if len(w.Data) > 0 {
		if u, ok := p.(*Unknown); ok {
			u.Data = w.Data
		} else if err := json.Unmarshal(w.Data, p); err != nil {
			return fmt.Errorf("%s data: %w", w.Type, err)
		}
	}
	*e = Event{w.SchemaVersion, w.RunID, w.AgentID, w.Seq, w.Time, w.Type, p, w.Prev}
	return nil
}

// Unknown is the payload of an event type this Sparrow does not know.
type Unknown struct {
	Name Type            `json:"-"`
	Data json.RawMessage `json:"-"`
}

// EventType implements Payload.
func (u *Unknown) EventType() Type { return u.Name }

// MarshalJSON keeps the data as it was.
func (u *Unknown) MarshalJSON() ([]byte, error) { return u.Data, nil }

// New returns a pointer to a zero payload of type t, or nil when t is not
// a known type.
func New(t Type) Payload {
	switch t {
	case TypeRunStarted:
		return &RunStarted{}
	case TypeRouteSelected:
		return &RouteSelected{}
	case TypeModelSwitched:
		return &ModelSwitched{}
	case TypeThinkingDelta:
		return &ThinkingDelta{}
	case TypeMessage:
		return &Message{}
	case TypeToolUseProposed:
		return &ToolUseProposed{}
	case TypeApprovalRequested:
		return &ApprovalRequested{}
	case TypeApprovalResolved:
		return &ApprovalResolved{}
	case TypeToolUseStarted:
		return &ToolUseStarted{}
	case TypeToolOutput:
		return &ToolOutput{}
	case TypeDiffProposed:
		return &DiffProposed{}
	case TypeDiffApplied:
		return &DiffApplied{}
	case TypeTestResult:
		return &TestResult{}
	case TypeAgentSpawned:
		return &AgentSpawned{}
	case TypeAgentStatus:
		return &AgentStatus{}
	case TypeCheckpointCreated:
		return &CheckpointCreated{}
	case TypeCompacted:
		return &Compacted{}
	case TypeSkillLearned:
		return &SkillLearned{}
	case TypeCostUpdate:
		return &CostUpdate{}
	case TypeTokenUsage:
		return &TokenUsage{}
	case TypeAutonomyChanged:
		return &AutonomyChanged{}
	case TypeRunFinished:
		return &RunFinished{}
	case TypeError:
		return &Error{}
	}
	return nil
}

// Types lists every known event type, in the order of docs/events.md.
func Types() []Type {
	return []Type{
		TypeRunStarted, TypeRouteSelected, TypeModelSwitched, TypeThinkingDelta, TypeMessage,
		TypeToolUseProposed, TypeApprovalRequested, TypeApprovalResolved, TypeToolUseStarted,
		TypeToolOutput, TypeDiffProposed, TypeDiffApplied, TypeTestResult, TypeAgentSpawned,
		TypeAgentStatus, TypeCheckpointCreated, TypeCompacted, TypeSkillLearned, TypeCostUpdate,
		TypeTokenUsage, TypeAutonomyChanged, TypeRunFinished, TypeError,
	}
}
