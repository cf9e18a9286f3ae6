package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// WorkspaceDir is where the host mounts the workspace inside the guest. It
// is the only directory a WASM tool can see.
const WorkspaceDir = "/workspace"

// Request is the one JSON object a tool reads on stdin.
type Request struct {
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
		return fmt.Errorf("decode arguments: %w", err)
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
	var req Request
	dec := json.NewDecoder(r)
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("read request: %w", err)
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
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}
