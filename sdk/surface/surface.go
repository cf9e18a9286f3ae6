// Package surface is the SDK for surfaces: places that render Sparrow's
// event stream (a web console, a chat gateway) and send commands back. A
// surface implements Surface; a plugin's main calls Serve.
package surface

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// Surface is one surface.
type Surface interface {
	plugin.Component
	// Deliver receives events in sequence order, already redacted by the
	// kernel.
	Deliver(ctx context.Context, ev Event) error
	// Commands sends what the surface's users ask for until ctx ends.
	Commands(ctx context.Context, send func(Command) error) error
}

// Event is one entry of the event stream; JSON is the complete event in its
// public, versioned shape (docs/events.md).
type Event struct {
	SchemaVersion int
	RunID         string
	AgentID       string
	Seq           uint64
	Time          time.Time
	Type          string
	JSON          json.RawMessage
}

// Command is a request from a surface's user. Exactly one of the pointer
// fields is set.
type Command struct {
	// Principal is who asked, as the surface authenticated them.
	Principal   string
	StartRun    *StartRun
	Approve     *Approve
	Deny        *Deny
	Cancel      *Cancel
	SetAutonomy *SetAutonomy
}

// StartRun asks for a new run.
type StartRun struct{ Task, Workspace, Model string }

// Approve answers an approval request; Scope is "once" or "run".
type Approve struct{ ApprovalID, Scope string }

// Deny refuses an approval request.
type Deny struct{ ApprovalID, Reason string }

// Cancel stops a run.
type Cancel struct{ RunID string }

// SetAutonomy moves a run's autonomy dial.
type SetAutonomy struct {
	RunID string
	Level float64
}
