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
		// A model's mistake is an error result it can correct, not a
		// failed call.
		return tool.Errorf("%v", err), nil
	}
	if args.Name == "" {
		return tool.Errorf("name is required"), nil
	}
	fmt.Fprintf(call.Output, "hoisting the greeting for %s\n", args.Name)
	return tool.Result{Content: fmt.Sprintf("Ahoy, %s!", args.Name)}, nil
}

// shout runs echo through the kernel's Host service: a tool never starts a
// process itself, so the kernel can gate and sandbox every command.
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
	var stdout, stderr strings.Builder
	exit, err := call.Host.Exec(ctx, sandbox.ExecRequest{Argv: []string{"echo", args.Message}}, sandbox.IO{Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		return tool.Result{}, fmt.Errorf("run echo: %w", err)
	}
	if exit.Code != 0 {
		// The kernel explains a refusal (exit 126) or an unsupported
		// request (exit 127) on stderr; pass it on to the model.
		return tool.Errorf("echo exited %d: %s", exit.Code, strings.TrimSpace(stderr.String())), nil
	}
	return tool.Result{Content: strings.ToUpper(strings.TrimSpace(stdout.String()))}, nil
}
