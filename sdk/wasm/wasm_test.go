package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHandle(t *testing.T) {
	type args struct {
		Name string `json:"name"`
	}
	greet := func(req Request) (string, error) {
		var a args
		if err := req.Decode(&a); err != nil {
			return "", err
		}
		if a.Name == "" {
			return "", errors.New("name is required")
		}
		return "hello " + a.Name + " in " + req.Workspace, nil
	}
	tests := []struct {
		name  string
		stdin string
		want  Response
	}{
		{"output", `{"args":{"name":"ada"},"workspace":"/workspace"}`, Response{Output: "hello ada in /workspace"}},
		{"tool error", `{"args":{}}`, Response{Error: "name is required"}},
		{"missing args", `{}`, Response{Error: "name is required"}},
		{"unknown argument", `{"args":{"nmae":"ada"}}`, Response{Error: `decode arguments: json: unknown field "nmae"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Handle(strings.NewReader(tc.stdin), &out, greet); err != nil {
				t.Fatal(err)
			}
			var got Response
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("stdout %q: %v", out.String(), err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandleBadRequest(t *testing.T) {
	var out bytes.Buffer
	err := Handle(strings.NewReader("not json"), &out, func(Request) (string, error) { return "", nil })
	if err == nil || !strings.Contains(err.Error(), "read request") {
		t.Fatalf("err = %v, want a read request error", err)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", out.String())
	}
}
