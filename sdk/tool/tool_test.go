package tool

import (
	"strings"
	"testing"
)

func TestValidateSpec(t *testing.T) {
	ok := Spec{Name: "read_file", Risk: RiskReadOnly, InputSchema: []byte(`{"type":"object"}`)}
	cases := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"valid", func(*Spec) {}, ""},
		{"dash and digits", func(s *Spec) { s.Name = "git-log2" }, ""},
		{"empty name", func(s *Spec) { s.Name = "" }, "want 1-64 letters"},
		{"space", func(s *Spec) { s.Name = "read file" }, "want 1-64 letters"},
		{"too long", func(s *Spec) { s.Name = strings.Repeat("a", 65) }, "want 1-64 letters"},
		{"unicode", func(s *Spec) { s.Name = "lire_fichié" }, "want 1-64 letters"},
		{"no risk", func(s *Spec) { s.Risk = "" }, "unknown risk level"},
		{"bad risk", func(s *Spec) { s.Risk = "spicy" }, `unknown risk level "spicy"`},
		{"schema not JSON", func(s *Spec) { s.InputSchema = []byte(`{`) }, "not a JSON object"},
		{"schema not object", func(s *Spec) { s.InputSchema = []byte(`[1]`) }, "not a JSON object"},
	}
	for _, tc := range cases {
		s := ok
		tc.edit(&s)
		err := ValidateSpec(s)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDecodeArguments(t *testing.T) {
	var args struct {
		Path string `json:"path"`
	}
	c := &Call{Arguments: []byte(`{"path":"a.go"}`)}
	if err := c.DecodeArguments(&args); err != nil || args.Path != "a.go" {
		t.Fatalf("%v %+v", err, args)
	}
	c = &Call{Arguments: []byte(`{"pth":"a.go"}`)}
	if err := c.DecodeArguments(&args); err == nil || !strings.Contains(err.Error(), `unknown field "pth"`) {
		t.Fatalf("typo accepted: %v", err)
	}
	c = &Call{}
	if err := c.DecodeArguments(&args); err != nil {
		t.Fatalf("no arguments is an empty object: %v", err)
	}
}
