package tool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func TestValidateSpec(t *testing.T) {
	ok := tool.Spec{Name: "read_file", Risk: tool.RiskReadOnly, InputSchema: []byte(`{"type":"object"}`)}
	cases := []struct {
		name string
		edit func(*tool.Spec)
		want string // empty: valid
	}{
		{"valid", func(*tool.Spec) {}, ""},
		{"dash and digits", func(s *tool.Spec) { s.Name = "git-log2" }, ""},
		{"upper case", func(s *tool.Spec) { s.Name = "ReadFile" }, ""},
		{"64 characters", func(s *tool.Spec) { s.Name = strings.Repeat("a", 64) }, ""},
		{"every risk: mutating", func(s *tool.Spec) { s.Risk = tool.RiskMutating }, ""},
		{"every risk: exec", func(s *tool.Spec) { s.Risk = tool.RiskExec }, ""},
		{"every risk: destructive", func(s *tool.Spec) { s.Risk = tool.RiskDestructive }, ""},
		{"every risk: network", func(s *tool.Spec) { s.Risk = tool.RiskNetwork }, ""},
		{"schema with properties", func(s *tool.Spec) {
			s.InputSchema = []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
		}, ""},
		{"empty name", func(s *tool.Spec) { s.Name = "" }, `tool name "": want 1-64 letters`},
		{"space", func(s *tool.Spec) { s.Name = "read file" }, "want 1-64 letters"},
		{"dot", func(s *tool.Spec) { s.Name = "fs.read" }, "want 1-64 letters"},
		{"slash", func(s *tool.Spec) { s.Name = "fs/read" }, "want 1-64 letters"},
		{"65 characters", func(s *tool.Spec) { s.Name = strings.Repeat("a", 65) }, "want 1-64 letters"},
		{"unicode", func(s *tool.Spec) { s.Name = "lire_fichié" }, "want 1-64 letters"},
		{"no risk", func(s *tool.Spec) { s.Risk = "" }, `tool read_file: unknown risk level ""`},
		{"bad risk", func(s *tool.Spec) { s.Risk = "spicy" }, `unknown risk level "spicy"`},
		{"risk in capitals", func(s *tool.Spec) { s.Risk = "READ-ONLY" }, "unknown risk level"},
		{"no schema", func(s *tool.Spec) { s.InputSchema = nil }, "input schema is not a JSON object"},
		{"schema not JSON", func(s *tool.Spec) { s.InputSchema = []byte(`{`) }, "input schema is not a JSON object"},
		{"schema an array", func(s *tool.Spec) { s.InputSchema = []byte(`[1]`) }, "input schema is not a JSON object"},
		{"schema a string", func(s *tool.Spec) { s.InputSchema = []byte(`"object"`) }, "input schema is not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			err := tool.ValidateSpec(s)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseRisk(t *testing.T) {
	for _, r := range []tool.Risk{tool.RiskReadOnly, tool.RiskMutating, tool.RiskExec, tool.RiskDestructive, tool.RiskNetwork} {
		if got, err := tool.ParseRisk(string(r)); err != nil || got != r {
			t.Errorf("ParseRisk(%q) = %q, %v", r, got, err)
		}
	}
	if _, err := tool.ParseRisk("readonly"); err == nil || !strings.Contains(err.Error(), "want read-only, mutating, exec, destructive or network") {
		t.Errorf("ParseRisk(readonly) = %v", err)
	}
}

func TestDecodeArguments(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	cases := []struct {
		name string
		raw  string
		want args
		err  string
	}{
		{name: "fields", raw: `{"path":"a.go","limit":3}`, want: args{Path: "a.go", Limit: 3}},
		{name: "missing fields stay zero", raw: `{"path":"a.go"}`, want: args{Path: "a.go"}},
		{name: "no arguments are an empty object", raw: ``, want: args{}},
		{name: "unknown field", raw: `{"pth":"a.go"}`, err: `arguments: json: unknown field "pth"`},
		{name: "unknown field beside known", raw: `{"path":"a.go","recursive":true}`, err: `unknown field "recursive"`},
		{name: "wrong type", raw: `{"limit":"ten"}`, err: "arguments: json: cannot unmarshal string"},
		{name: "not an object", raw: `["a.go"]`, err: "arguments: json: cannot unmarshal array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got args
			err := (&tool.Call{Arguments: json.RawMessage(tc.raw)}).DecodeArguments(&got)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("arguments (-want +got):\n%s", d)
			}
		})
	}
}

func TestErrorf(t *testing.T) {
	want := tool.Result{Content: "no such file: a.go", IsError: true}
	if d := cmp.Diff(want, tool.Errorf("no such file: %s", "a.go")); d != "" {
		t.Errorf("Errorf (-want +got):\n%s", d)
	}
}
