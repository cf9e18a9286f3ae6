package plugin

import (
	"context"
	"encoding/json"
)

// Component is one provider, tool, sandbox backend or surface served by a
// plugin process. Kind packages embed it in their own interfaces.
type Component interface {
	// Name is the component's name, unique within its kind.
	Name() string
}

// Describer is implemented by components that explain themselves in
// `sparrow plugin info`.
type Describer interface {
	Description() string
}

// Configurable is implemented by components that accept configuration from
// their HCL block. The kernel decodes the block against ConfigSchema,
// reporting errors with file and line, and passes the result to Configure as
// a JSON object keyed by attribute name.
type Configurable interface {
	ConfigSchema() Schema
	Configure(ctx context.Context, cfg Config) error
}

// Config is a component's decoded configuration.
type Config struct {
	// Values is a JSON object keyed by attribute name, defaults filled in.
	Values json.RawMessage
	// Workspace is the absolute workspace root of the run, when known.
	Workspace string
	// StateDir is Sparrow's state directory. A component that keeps state
	// across runs keeps it in a subdirectory it names after itself.
	StateDir string
}

// Decode unmarshals the configuration values into v.
func (c Config) Decode(v any) error {
	if len(c.Values) == 0 {
		return nil
	}
	return json.Unmarshal(c.Values, v)
}
