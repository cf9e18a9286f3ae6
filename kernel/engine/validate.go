package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// validateArguments checks a call's arguments against the tool's schema
// before the gate sees them: a JSON object, required properties present,
// declared properties of the declared JSON type. It returns the decoded
// object. The tool checks the rest (unknown fields, ranges).
func validateArguments(spec tool.Spec, raw string) (map[string]any, error) {
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", truncate(raw, 80))
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		return args, nil // the spec was validated at load; nothing more to check
	}
	var problems []string
	for _, name := range schema.Required {
		if _, ok := args[name]; !ok {
			problems = append(problems, fmt.Sprintf("missing required %q", name))
		}
	}
	names := make([]string, 0, len(args))
	for n := range args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		prop, ok := schema.Properties[n]
		if !ok || prop.Type == nil {
			continue
		}
		if !hasType(args[n], prop.Type) {
			problems = append(problems, fmt.Sprintf("%q should be %v", n, prop.Type))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", joinProblems(problems))
	}
	return args, nil
}

func hasType(v any, want any) bool {
	switch w := want.(type) {
	case string:
		return jsonType(v, w)
	case []any:
		for _, t := range w {
			if s, ok := t.(string); ok && jsonType(v, s) {
				return true
			}
		}
		return false
	}
	return true
}

func jsonType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

func joinProblems(p []string) string {
	out := p[0]
	for _, s := range p[1:] {
		out += "; " + s
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func providerCall(g *grant) provider.ToolCall { return provider.ToolCall{ID: g.callID, Name: g.tool} }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
