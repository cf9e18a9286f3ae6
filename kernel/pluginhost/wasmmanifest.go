package pluginhost

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// WASMTool is one tool of a WASM plugin, as its manifest declares it: the
// same Spec a gRPC tool reports about itself, and the limits of a call.
type WASMTool struct {
	Spec tool.Spec
	// Timeout, MemoryBytes and MaxOutputBytes are the per-call limits the
	// manifest asks for; zero means the runtime's default.
	Timeout        time.Duration
	MemoryBytes    int64
	MaxOutputBytes int64
}

// maxWASMTimeout bounds what a manifest may ask for: a tool call is not a
// build.
const maxWASMTimeout = 10 * time.Minute

type toolBlock struct {
	Name          string         `hcl:"name,label"`
	Description   string         `hcl:"description"`
	Risk          string         `hcl:"risk"`
	PathArguments []string       `hcl:"path_arguments,optional"`
	InputSchema   hcl.Expression `hcl:"input_schema"`
	Timeout       string         `hcl:"timeout,optional"`
	Memory        string         `hcl:"memory,optional"`
	MaxOutput     string         `hcl:"max_output,optional"`
	Body          hcl.Body       `hcl:",body"`
	DefRange      hcl.Range      `hcl:",def_range"`
}

// checkRuntime applies what depends on the runtime: a WASM plugin serves
// tools only, declares each in a tool block, and may ask for nothing but
// the clock and randomness; a gRPC plugin has no tool blocks.
func (m *Manifest) checkRuntime(b manifestBlock, block *hcl.Block) hcl.Diagnostics {
	var diags hcl.Diagnostics
	bad := func(rng hcl.Range, format string, args ...any) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
			Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()})
	}
	capsRange := block.DefRange
	if c := b.Capabilities; c != nil {
		if inner, _, _ := block.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "capabilities"}}}); len(inner.Blocks) > 0 {
			capsRange = inner.Blocks[0].DefRange
		}
	}
	if m.Runtime != RuntimeWASM {
		for _, t := range b.Tools {
			bad(t.DefRange, "tool %q: tool blocks describe the tools of a WASM module; a gRPC plugin describes its tools itself.", t.Name)
		}
		if c := m.Capabilities; c.Clock || c.Random {
			bad(capsRange, "capabilities.clock and capabilities.random are grants for WASM modules; a plugin process has the host's clock and entropy.")
		}
		return diags
	}
	if m.Kind != "" && m.Kind != plugin.KindTool {
		bad(block.DefRange, "A WASM plugin serves tools; a %s plugin runs as a process (runtime = \"grpc\").", m.Kind)
		return diags
	}
	c := m.Capabilities
	if c.Network {
		bad(capsRange, "capabilities.network: a WASM tool has no sockets; a tool that needs the network is a gRPC plugin that declares it.")
	}
	if len(c.Paths) > 0 || len(c.Env) > 0 || c.Workspace {
		bad(capsRange, "capabilities: a WASM tool gets the workspace and nothing else: no extra paths, no environment (clock and random are the grants it may ask for).")
	}
	byName := map[string]toolBlock{}
	for _, t := range b.Tools {
		if _, dup := byName[t.Name]; dup {
			bad(t.DefRange, "tool %q is described twice.", t.Name)
			continue
		}
		byName[t.Name] = t
		if !slices.Contains(b.Components, t.Name) {
			bad(t.DefRange, "tool %q is not in components %q.", t.Name, b.Components)
		}
	}
	for _, name := range b.Components {
		t, ok := byName[name]
		if !ok {
			bad(block.DefRange, "component %q has no tool %q block: a WASM plugin declares each tool's risk, arguments and schema in its manifest.", name, name)
			continue
		}
		wt, d := parseToolBlock(t)
		diags = append(diags, d...)
		if !d.HasErrors() {
			m.Tools = append(m.Tools, wt)
		}
	}
	return diags
}

// parseToolBlock checks one tool block and turns it into a WASMTool.
func parseToolBlock(t toolBlock) (WASMTool, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	attrs, _ := t.Body.JustAttributes()
	bad := func(attr, format string, args ...any) {
		rng := t.DefRange
		if a, ok := attrs[attr]; ok {
			rng = a.Expr.Range()
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid plugin manifest",
			Detail: fmt.Sprintf("tool %q: "+format, append([]any{t.Name}, args...)...), Subject: &rng})
	}
	wt := WASMTool{Spec: tool.Spec{Name: t.Name, Description: t.Description, PathArguments: t.PathArguments}}
	if t.Description == "" {
		bad("description", "description is empty; the model chooses tools by it.")
	}
	risk, err := tool.ParseRisk(t.Risk)
	switch {
	case err != nil:
		bad("risk", "%s.", err)
	case risk == tool.RiskExec:
		bad("risk", "a WASM tool cannot run commands (it has no host functions beyond WASI); declare read-only, mutating or destructive.")
	case risk == tool.RiskNetwork:
		bad("risk", "a WASM tool has no sockets; declare read-only, mutating or destructive.")
	}
	wt.Spec.Risk = risk
	schema, props, problem := inputSchema(t.InputSchema)
	if problem != "" {
		bad("input_schema", "%s", problem)
	}
	wt.Spec.InputSchema = schema
	for _, p := range t.PathArguments {
		if problem == "" && !slices.Contains(props, p) {
			bad("path_arguments", "path argument %q is not a property of input_schema.", p)
		}
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil || d <= 0 || d > maxWASMTimeout {
			bad("timeout", "timeout %q: want a duration such as \"30s\", at most %s.", t.Timeout, maxWASMTimeout)
		}
		wt.Timeout = d
	}
	size := func(attr, v string, dst *int64) {
		if v == "" {
			return
		}
		n, err := sandbox.ParseSize(v)
		if err != nil || n <= 0 {
			bad(attr, "%s %q: want a size such as \"64MiB\".", attr, v)
		}
		*dst = n
	}
	size("memory", t.Memory, &wt.MemoryBytes)
	size("max_output", t.MaxOutput, &wt.MaxOutputBytes)
	return wt, diags
}

// inputSchema evaluates a tool's input_schema (a JSON Schema written as an
// HCL object) to JSON, and lists its properties. problem is set when the
// expression is not a schema for an arguments object.
func inputSchema(expr hcl.Expression) (schema json.RawMessage, props []string, problem string) {
	v, d := expr.Value(nil)
	if d.HasErrors() {
		return nil, nil, "input_schema must be a constant object: " + d.Error()
	}
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil, nil, "input_schema must be an object (a JSON Schema written in HCL)."
	}
	raw, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil, nil, "input_schema cannot be written as JSON: " + err.Error()
	}
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, "input_schema: " + err.Error()
	}
	if s.Type != "object" {
		return nil, nil, `input_schema: type must be "object": a tool's arguments are a JSON object.`
	}
	for name, p := range s.Properties {
		var obj map[string]any
		if json.Unmarshal(p, &obj) != nil {
			return nil, nil, fmt.Sprintf("input_schema: property %q must be an object.", name)
		}
		props = append(props, name)
	}
	slices.Sort(props)
	for _, r := range s.Required {
		if !slices.Contains(props, r) {
			return nil, nil, fmt.Sprintf("input_schema: required %q is not among the properties %q.", r, props)
		}
	}
	return raw, props, ""
}
