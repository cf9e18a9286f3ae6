package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// respond runs handle on stdin and decodes the one response it writes.
func respond(t *testing.T, stdin string, handle func(r *strings.Reader, w *bytes.Buffer) error) Response {
	t.Helper()
	var out bytes.Buffer
	if err := handle(strings.NewReader(stdin), &out); err != nil {
		t.Fatal(err)
	}
	var got Response
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if dec.More() {
		t.Fatalf("stdout %q holds more than one value", out.String())
	}
	return got
}

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
		return "hello " + a.Name + " in " + req.Workspace + " as " + req.Tool, nil
	}
	tests := []struct {
		name  string
		stdin string
		want  Response
	}{
		{"output", `{"tool":"greet","args":{"name":"ada"},"workspace":"/workspace"}`, Response{Output: "hello ada in /workspace as greet"}},
		{"tool error", `{"args":{}}`, Response{Error: "name is required"}},
		{"missing args", `{}`, Response{Error: "name is required"}},
		{"unknown argument", `{"args":{"nmae":"ada"}}`, Response{Error: `arguments: json: unknown field "nmae"`}},
		{"html characters", `{"args":{"name":"<a&b>"}}`, Response{Output: "hello <a&b> in  as "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := respond(t, tc.stdin, func(r *strings.Reader, w *bytes.Buffer) error { return Handle(r, w, greet) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// Source code is full of <, > and &; escaping them would make a result
// up to six times longer than the text and breach the host's output cap.
func TestHandleDoesNotEscapeHTML(t *testing.T) {
	var out bytes.Buffer
	if err := Handle(strings.NewReader(`{}`), &out, func(Request) (string, error) { return "if a < b && c > d", nil }); err != nil {
		t.Fatal(err)
	}
	if want := `{"output":"if a < b && c > d"}` + "\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
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

func TestHandleTools(t *testing.T) {
	tools := map[string]Func{
		"upper": func(req Request) (string, error) { return strings.ToUpper(string(req.Args)), nil },
		"fail":  func(Request) (string, error) { return "", errors.New("no luck") },
	}
	tests := []struct {
		name     string
		stdin    string
		fallback string
		want     Response
	}{
		{"dispatch on the tool", `{"tool":"upper","args":"abc"}`, "", Response{Output: `"ABC"`}},
		{"a tool error stays a result", `{"tool":"fail"}`, "", Response{Error: "no luck"}},
		{"argv[0] when the request names none", `{"args":"x"}`, "upper", Response{Output: `"X"`}},
		{"the request wins over argv[0]", `{"tool":"fail"}`, "upper", Response{Error: "no luck"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := respond(t, tc.stdin, func(r *strings.Reader, w *bytes.Buffer) error {
				return handleTools(r, w, tools, tc.fallback)
			})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// A module asked for a tool it does not serve fails the call, saying
// which tools it has, and writes no result the host could mistake for one.
func TestHandleToolsUnknownTool(t *testing.T) {
	tools := map[string]Func{"grep": nil, "glob": nil}
	tests := []struct{ name, stdin, want string }{
		{"unknown", `{"tool":"find","args":{}}`, `unknown tool "find"; this module serves glob, grep`},
		{"unnamed", `{"args":{}}`, "the request names no tool; this module serves glob, grep"},
		{"not a request", `[`, "read request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := HandleTools(strings.NewReader(tc.stdin), &out, tools)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
		})
	}
	if err := HandleTools(strings.NewReader(`{"tool":"x"}`), new(bytes.Buffer), nil); err == nil {
		t.Error("HandleTools with no tools succeeded")
	}
}
