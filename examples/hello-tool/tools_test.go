package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// fakeHost stands in for the kernel's Host service: it "runs" echo and
// records what it was asked, or refuses like the gate does.
type fakeHost struct {
	ran    [][]string
	refuse string
}

func (h *fakeHost) Exec(_ context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	h.ran = append(h.ran, req.Argv)
	if h.refuse != "" {
		fmt.Fprintln(sio.Stderr, h.refuse)
		return sandbox.Exit{Code: 126}, nil
	}
	fmt.Fprintln(sio.Stdout, strings.Join(req.Argv[1:], " "))
	return sandbox.Exit{}, nil
}

func TestSpecsAreValid(t *testing.T) {
	for _, tl := range []tool.Tool{greet{}, shout{}} {
		if err := tool.ValidateSpec(tl.Spec()); err != nil {
			t.Error(err)
		}
		if tl.Spec().Description == "" {
			t.Errorf("%s has no description", tl.Spec().Name)
		}
	}
}

func TestTools(t *testing.T) {
	cases := []struct {
		name     string
		tool     tool.Tool
		args     string
		host     *fakeHost
		want     tool.Result
		progress string
	}{
		{name: "greet", tool: greet{}, args: `{"name":"Ada"}`, want: tool.Result{Content: "Ahoy, Ada!"}, progress: "hoisting the greeting for Ada\n"},
		{name: "greet without a name", tool: greet{}, args: `{}`, want: tool.Errorf("name is required")},
		{name: "greet with a typo", tool: greet{}, args: `{"nmae":"Ada"}`, want: tool.Errorf(`arguments: json: unknown field "nmae"`)},
		{name: "shout", tool: shout{}, args: `{"message":"land ho"}`, host: &fakeHost{}, want: tool.Result{Content: "LAND HO"}},
		{name: "shout refused by the gate", tool: shout{}, args: `{"message":"x"}`, host: &fakeHost{refuse: "sparrow: not run: denied by rule"},
			want: tool.Errorf("echo exited 126: sparrow: not run: denied by rule")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var progress strings.Builder
			call := &tool.Call{ID: "call-1", Arguments: json.RawMessage(tc.args), Output: &progress}
			if tc.host != nil {
				call.Host = tc.host
			}
			got, err := tc.tool.Invoke(context.Background(), call)
			if err != nil {
				t.Fatal(err)
			}
			if got.Content != tc.want.Content || got.IsError != tc.want.IsError {
				t.Errorf("result = %+v, want %+v", got, tc.want)
			}
			if progress.String() != tc.progress {
				t.Errorf("progress = %q, want %q", progress.String(), tc.progress)
			}
		})
	}
}
