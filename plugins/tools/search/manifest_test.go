package search

import (
	_ "embed"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// The model-facing descriptions, reviewed as Markdown; plugin.hcl must
// carry them word for word.
var (
	//go:embed glob.md
	globDoc string
	//go:embed grep.md
	grepDoc string
)

// The input schemas as the tools documented them when they were gRPC
// tools (Spec().InputSchema): plugin.hcl must say exactly this.
const (
	globSchema = `{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Glob relative to path, e.g. **/*.go; ** spans directories."},` +
		`"path":{"type":"string","description":"Workspace-relative directory to search (default: the workspace root)."}},` +
		`"required":["pattern"],"additionalProperties":false}`
	grepSchema = `{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"RE2 regular expression, matched per line."},` +
		`"path":{"type":"string","description":"Workspace-relative directory or file to search (default: the workspace root)."},` +
		`"glob":{"type":"string","description":"Only files matching this glob, e.g. *.go or src/**/*.ts."},` +
		`"ignore_case":{"type":"boolean"},` +
		`"context":{"type":"integer","minimum":0,"maximum":5,"description":"Lines of context around each match."},` +
		`"max_results":{"type":"integer","minimum":1,"maximum":2000,"description":"Matching lines to show (default 200)."}},` +
		`"required":["pattern"],"additionalProperties":false}`
)

// manifestTool is what plugin.hcl says of one tool.
type manifestTool struct {
	risk          string
	pathArguments []string
	description   string
	schema        string // input_schema as JSON
}

// readManifest reads the attributes this package cares about from
// plugin.hcl with HCL alone (plugins never import the kernel's parser).
func readManifest(t *testing.T) (attrs map[string]cty.Value, tools map[string]manifestTool, order []string) {
	t.Helper()
	f, diags := hclparse.NewParser().ParseHCLFile("plugin.hcl")
	failOn(t, diags)
	top, diags := f.Body.Content(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "plugin", LabelNames: []string{"name"}}}})
	failOn(t, diags)
	if len(top.Blocks) != 1 || top.Blocks[0].Labels[0] != "search" {
		t.Fatalf("plugin.hcl: want one plugin \"search\" block, got %d", len(top.Blocks))
	}
	body, _, diags := top.Blocks[0].Body.PartialContent(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "runtime"}, {Name: "entry"}, {Name: "components"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "tool", LabelNames: []string{"name"}}},
	})
	failOn(t, diags)
	attrs = map[string]cty.Value{}
	for name, a := range body.Attributes {
		attrs[name] = eval(t, a)
	}
	tools = map[string]manifestTool{}
	for _, b := range body.Blocks {
		content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
			{Name: "risk", Required: true}, {Name: "path_arguments"}, {Name: "description", Required: true},
			{Name: "input_schema", Required: true}, {Name: "timeout"}, {Name: "memory"}, {Name: "max_output"},
		}})
		failOn(t, diags)
		schema := eval(t, content.Attributes["input_schema"])
		js, err := ctyjson.Marshal(schema, schema.Type())
		if err != nil {
			t.Fatalf("tool %s: input_schema as JSON: %v", b.Labels[0], err)
		}
		mt := manifestTool{
			risk:        eval(t, content.Attributes["risk"]).AsString(),
			description: eval(t, content.Attributes["description"]).AsString(),
			schema:      string(js),
		}
		if a, ok := content.Attributes["path_arguments"]; ok {
			for _, v := range eval(t, a).AsValueSlice() {
				mt.pathArguments = append(mt.pathArguments, v.AsString())
			}
		}
		tools[b.Labels[0]] = mt
		order = append(order, b.Labels[0])
	}
	return attrs, tools, order
}

func eval(t *testing.T, a *hcl.Attribute) cty.Value {
	t.Helper()
	v, diags := a.Expr.Value(nil)
	failOn(t, diags)
	return v
}

func failOn(t *testing.T, diags hcl.Diagnostics) {
	t.Helper()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
}

// plugin.hcl is what the kernel tells the model about glob and grep: it
// must say what the code does, and what the tools said before they moved
// to WASM.
func TestManifest(t *testing.T) {
	attrs, tools, order := readManifest(t)
	if got := attrs["runtime"].AsString(); got != "wasm" {
		t.Errorf("runtime = %q, want wasm", got)
	}
	if got := attrs["entry"].AsString(); got != "search.wasm" {
		t.Errorf("entry = %q, want search.wasm (built from cmd/search)", got)
	}
	var components []string
	for _, v := range attrs["components"].AsValueSlice() {
		components = append(components, v.AsString())
	}
	if diff := cmp.Diff([]string{"glob", "grep"}, components); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(components, order); diff != "" {
		t.Errorf("tool blocks, in order, differ from components (-components +blocks):\n%s", diff)
	}

	want := map[string]struct {
		doc, schema string
		args        any
	}{
		"glob": {globDoc, globSchema, globArgs{}},
		"grep": {grepDoc, grepSchema, grepArgs{}},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			got, ok := tools[name]
			if !ok {
				t.Fatalf("no tool %q block", name)
			}
			if got.risk != "read-only" {
				t.Errorf("risk = %q, want read-only", got.risk)
			}
			if diff := cmp.Diff(w.doc, got.description); diff != "" {
				t.Errorf("description differs from %s.md (-md +hcl):\n%s", name, diff)
			}
			var wantSchema, gotSchema schemaDoc
			mustUnmarshal(t, w.schema, &wantSchema)
			mustUnmarshal(t, got.schema, &gotSchema)
			if diff := cmp.Diff(wantSchema, gotSchema); diff != "" {
				t.Errorf("input_schema (-documented +plugin.hcl):\n%s", diff)
			}
			// The model may send exactly the properties the code decodes:
			// Request.Decode rejects any other.
			if diff := cmp.Diff(jsonFields(w.args), sortedKeys(gotSchema.Properties)); diff != "" {
				t.Errorf("schema properties differ from the fields of %T (-fields +schema):\n%s", w.args, diff)
			}
			if diff := cmp.Diff([]string{"path"}, got.pathArguments); diff != "" {
				t.Errorf("path_arguments (-want +got):\n%s", diff)
			}
			for _, p := range got.pathArguments {
				if _, ok := gotSchema.Properties[p]; !ok {
					t.Errorf("path argument %s is not in the schema", p)
				}
			}
		})
	}
}

// schemaDoc is a JSON Schema object; Properties stay generic so every
// keyword of every property is compared.
type schemaDoc struct {
	Type                 string         `json:"type"`
	Properties           map[string]any `json:"properties"`
	Required             []string       `json:"required"`
	AdditionalProperties *bool          `json:"additionalProperties"`
}

// mustUnmarshal decodes a schema, refusing keywords schemaDoc does not
// name so none escapes the comparison.
func mustUnmarshal(t *testing.T, s string, v *schemaDoc) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("schema %s: %v", s, err)
	}
}

func jsonFields(v any) []string {
	var names []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
