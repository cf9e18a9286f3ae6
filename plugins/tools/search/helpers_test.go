package search

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

// call runs fn in ws with args (JSON), as the guest would.
func call(fn wasm.Func, ws, args string) (string, error) {
	return fn(wasm.Request{Args: json.RawMessage(args), Workspace: ws})
}

// mustOK calls fn and returns its output, failing on a tool error.
func mustOK(t testing.TB, fn wasm.Func, ws, args string) string {
	t.Helper()
	out, err := call(fn, ws, args)
	if err != nil {
		t.Fatalf("%s: unexpected tool error: %v", args, err)
	}
	return out
}

// mustFail calls fn and checks its tool error mentions want.
func mustFail(t testing.TB, fn wasm.Func, ws, args, want string) {
	t.Helper()
	out, err := call(fn, ws, args)
	if err == nil {
		t.Fatalf("%s: want an error containing %q, got success: %s", args, want, out)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: error %q does not contain %q", args, err, want)
	}
}
