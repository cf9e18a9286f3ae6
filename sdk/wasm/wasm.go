package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WorkspaceDir is where the host mounts the workspace inside the guest. It
// is the only directory a WASM tool can see.
const WorkspaceDir = "/workspace"

// Request is the one JSON object a tool reads on stdin.
type Request struct {
	// Tool is the name of the tool called, the same as argv[0]. A module
	// serving several tools dispatches on it (see HandleTools).
	Tool string `json:"tool"`
	// Args are the tool's arguments, as the model sent them and the gate
	// allowed them: a JSON object matching the tool's schema.
	Args json.RawMessage `json:"args"`
	// Workspace is the guest path of the workspace ("/workspace"), or empty
	// when the call has no workspace.
	Workspace string `json:"workspace,omitempty"`
}

// Decode unmarshals the arguments into v, rejecting unknown fields so a
// typo in the model's call is an error rather than a silent default.
func (r Request) Decode(v any) error {
	args := r.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// Response is the one JSON object a tool writes on stdout. Exactly one of
// Output and Error is meant to be set: Error is the tool's own failure
// (a file that does not exist, a bad argument), shown to the model like
// any tool error; Output is what the model sees on success.
type Response struct {
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Func is a tool's body: it gets the decoded request and returns the
// output, or an error that becomes Response.Error.
type Func func(req Request) (string, error)

// Handle reads one Request from r, calls fn, and writes one Response to w.
// The error it returns is a protocol failure (stdin is not a request,
// stdout cannot be written); a failure of fn is reported in the Response
// and Handle returns nil.
func Handle(r io.Reader, w io.Writer, fn Func) error {
	if fn == nil {
		return errors.New("wasm: nil tool function")
	}
	return serve(r, w, func(Request) (Func, error) { return fn, nil })
}

// HandleTools is Handle for a module that serves several tools: it calls
// the function of the tool the request names. A request naming no tool or
// one missing from tools is a protocol failure (the host called a module
// that does not serve the tool, a packaging mistake) and nothing is
// written to w.
func HandleTools(r io.Reader, w io.Writer, tools map[string]Func) error {
	return handleTools(r, w, tools, "")
}

// handleTools is HandleTools with fallback as the tool's name when the
// request has none (a host older than the "tool" field: argv[0] names it).
func handleTools(r io.Reader, w io.Writer, tools map[string]Func, fallback string) error {
	if len(tools) == 0 {
		return errors.New("wasm: no tools to serve")
	}
	return serve(r, w, func(req Request) (Func, error) {
		name := req.Tool
		if name == "" {
			name = fallback
		}
		known := strings.Join(slices.Sorted(maps.Keys(tools)), ", ")
		fn, ok := tools[name]
		switch {
		case name == "":
			return nil, fmt.Errorf("the request names no tool; this module serves %s", known)
		case !ok || fn == nil:
			return nil, fmt.Errorf("unknown tool %q; this module serves %s", name, known)
		}
		return fn, nil
	})
}

// serve reads one Request, calls the function pick chooses for it and
// writes the Response.
func serve(r io.Reader, w io.Writer, pick func(Request) (Func, error)) error {
	var req Request
	dec := json.NewDecoder(r)
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	fn, err := pick(req)
	if err != nil {
		return err
	}
	var resp Response
	out, err := fn(req)
	if err != nil {
		resp.Error = err.Error()
		if resp.Error == "" {
			resp.Error = "tool failed"
		}
	} else {
		resp.Output = out
	}
	// Source code is full of <, > and &: written as they are, not as
	// \u003c, so the result stays well under the host's output cap.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}
