package fs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// noHost fails every exec: file tools must never need one.
type noHost struct{}

func (noHost) Exec(context.Context, sandbox.ExecRequest, sandbox.IO) (sandbox.Exit, error) {
	return sandbox.Exit{}, errors.New("file tools do not run commands")
}

// invoke calls tl in ws with args (JSON) and fails on a Go error.
func invoke(t testing.TB, tl tool.Tool, ws, args string) tool.Result {
	t.Helper()
	res, err := tl.Invoke(context.Background(), callFor(ws, args))
	if err != nil {
		t.Fatalf("%s %s: Go error %v", tl.Spec().Name, args, err)
	}
	return res
}

// callFor is a call in ws with args (JSON).
func callFor(ws, args string) *tool.Call {
	return &tool.Call{ID: "call_1", Arguments: json.RawMessage(args), Workspace: ws, Output: new(strings.Builder), Host: noHost{}}
}

// mustOK returns the content of a successful result.
func mustOK(t testing.TB, res tool.Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Content)
	}
	return res.Content
}

// mustFail checks an error result mentions want.
func mustFail(t testing.TB, res tool.Result, want string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error containing %q, got success: %s", want, res.Content)
	}
	if !strings.Contains(res.Content, want) {
		t.Fatalf("error %q does not contain %q", res.Content, want)
	}
}

func readString(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
