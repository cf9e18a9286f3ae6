// Package tool is the SDK for tools: the actions a model can ask for. A tool
// implements Tool; a plugin's main calls Serve with every tool it offers, so
// one process can serve a whole family (all filesystem tools, say).
//
// A tool never runs a command itself: it asks Call.Host, which the kernel
// routes through the permission gate and the configured sandbox.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Risk is how much harm a call can do; the gate maps it against the
// autonomy dial.
type Risk string

// Risk levels, from least to most guarded.
const (
	RiskReadOnly    Risk = "read-only"
	RiskMutating    Risk = "mutating"
	RiskExec        Risk = "exec"
	RiskDestructive Risk = "destructive"
	RiskNetwork     Risk = "network"
)

// ParseRisk returns the Risk named s.
func ParseRisk(s string) (Risk, error) {
	switch r := Risk(s); r {
	case RiskReadOnly, RiskMutating, RiskExec, RiskDestructive, RiskNetwork:
		return r, nil
	}
	return "", fmt.Errorf("unknown risk level %q (want read-only, mutating, exec, destructive or network)", s)
}

// Spec is what the model and the gate know about a tool.
type Spec struct {
	// Name is unique among all tools of a run, e.g. "read_file".
	Name string
	// Description is model-facing; keep it in a reviewable .md file and
	// embed it.
	Description string
	// InputSchema is the JSON Schema of the arguments object.
	InputSchema json.RawMessage
	// Risk is the tool's risk level.
	Risk Risk
	// PathArguments names the top-level arguments holding workspace paths;
	// the gate checks each against path rules and denied paths.
	PathArguments []string
}

// Tool is one tool.
type Tool interface {
	Spec() Spec
	Invoke(ctx context.Context, call *Call) (Result, error)
}

// Call is one invocation.
type Call struct {
	// ID is the model's tool-call id.
	ID string
	// Arguments is the JSON arguments object, already checked to be JSON.
	Arguments json.RawMessage
	// Workspace is the absolute workspace root.
	Workspace string
	// Output streams progress the user sees while the tool runs. Never nil.
	Output io.Writer
	// Host runs commands through the kernel's gate and sandbox. Never nil;
	// it fails when the kernel granted the call no Host.
	Host sandbox.Executor
	// Token ties Host calls to this call. The SDK uses it; tools do not.
	Token string
}

// DecodeArguments unmarshals the arguments into v, rejecting unknown fields
// so a model's typo is reported rather than ignored.
func (c *Call) DecodeArguments(v any) error {
	dec := json.NewDecoder(bytesReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// Result is what the model sees.
type Result struct {
	Content string
	// IsError marks a result the model should treat as a failure.
	IsError bool
	// Metadata is for surfaces (a diff, a file list), never the model.
	Metadata json.RawMessage
}

// Errorf returns an error Result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}
