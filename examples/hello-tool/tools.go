package main

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed greet.md
var greetDescription string

//go:embed shout.md
var shoutDescription string

// greet answers without running anything.
type greet struct{}

func (greet) Spec() tool.Spec {
	return tool.Spec{
		Name:        "greet",
		Description: greetDescription,
		Risk:        tool.RiskReadOnly,
		InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
}

func (greet) Invoke(_ context.Context, call *tool.Call) (tool.Result, error) {
	var args struct {
		Name string `json:"name"`
	}
	if err := call.DecodeArguments(&args); err != nil {
		return tool.Errorf("%v", err), nil
	}
	fmt.Fprintf(call.Output, "hoisting the greeting for %s\n", args.Name)
	return tool.Result{Content: fmt.Sprintf("Ahoy, %s!", args.Name)}, nil
}

// shout runs echo through the kernel's Host service.
type shout struct{}

func (shout) Spec() tool.Spec {
	return tool.Spec{
		Name:        "shout",
		Description: shoutDescription,
		Risk:        tool.RiskExec,
		InputSchema: []byte(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
	}
}

func (shout) Invoke(ctx context.Context, call *tool.Call) (tool.Result, error) {
	var args struct {
		Message string `json:"message"`
	}
	if err := call.DecodeArguments(&args); err != nil {
		return tool.Errorf("%v", err), nil
	}
	var out strings.Builder
	exit, err := call.Host.Exec(ctx, sandbox.ExecRequest{Argv: []string{"echo", args.Message}}, sandbox.IO{Stdout: &out})
	if err != nil {
		return tool.Result{}, err
	}
	if exit.Code != 0 {
		return tool.Errorf("echo exited %d", exit.Code), nil
	}
	return tool.Result{Content: strings.ToUpper(strings.TrimSpace(out.String()))}, nil
}
