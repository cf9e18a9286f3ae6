package pluginhost_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// The test binary doubles as every test plugin: the kernel execs it with
// TEST_PLUGIN_MODE (declared in the test manifest) naming what to be.
const modeEnv = "TEST_PLUGIN_MODE"

func TestMain(m *testing.M) {
	// The test binary is also the init confined plugins start under.
	confine.Init()
	if mode := os.Getenv(modeEnv); mode != "" {
		servePlugin(mode)
		os.Exit(0)
	}
	code := m.Run()
	if wasmDir != "" {
		os.RemoveAll(wasmDir)
	}
	os.Exit(code)
}

func servePlugin(mode string) {
	switch mode {
	case "sandbox":
		sandbox.Serve(echoSandbox{})
	case "tool":
		tool.Serve(hostTool{}, badArgsTool{})
	case "bad-tool":
		tool.Serve(garbageSpecTool{})
	case "provider", "provider-crash":
		provider.Serve(&chatty{crash: mode == "provider-crash"})
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: cannot open /etc/sparrow-test.conf: no such file")
		os.Exit(3)
	case "hang":
		fmt.Fprintln(os.Stderr, "warming up forever")
		time.Sleep(time.Hour)
	case "garbage":
		fmt.Println("hello from a program that is not a plugin")
		time.Sleep(time.Hour)
	case "protocol2":
		goplugin.Serve(&goplugin.ServeConfig{
			HandshakeConfig:  plugin.Handshake(),
			VersionedPlugins: map[int]goplugin.PluginSet{2: {"sandbox": &sandbox.Plugin{Sandboxes: []sandbox.Sandbox{echoSandbox{}}}}},
			GRPCServer:       goplugin.DefaultGRPCServer,
			Logger:           hclog.New(&hclog.LoggerOptions{Output: os.Stderr, JSONFormat: true}),
		})
	case "greedy-tool", "greedy-provider":
		serveGreedy(mode)
	case "wrong-kind":
		tool.Serve(hostTool{})
	default:
		fmt.Fprintf(os.Stderr, "unknown test plugin mode %q\n", mode)
		os.Exit(2)
	}
}

// echoSandbox "runs" a command by printing it; enough to exercise the
// protocol without a real backend.
type echoSandbox struct{}

func (echoSandbox) Name() string { return "echo" }
func (echoSandbox) Capabilities(context.Context) (sandbox.Capabilities, error) {
	return sandbox.Capabilities{Available: true}, nil
}
func (echoSandbox) Prepare(_ context.Context, r sandbox.PrepareRequest) (sandbox.Session, error) {
	return sandbox.Session{ID: "s-" + r.RunID, Workdir: r.Workspace}, nil
}
func (echoSandbox) Exec(ctx context.Context, r sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	switch r.Argv[0] {
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: sandbox state corrupted")
		os.Exit(2)
	case "cat":
		buf := make([]byte, 1<<16)
		for {
			n, err := io.Stdin.Read(buf)
			io.Stdout.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return sandbox.Exit{}, nil
	case "sleep":
		<-ctx.Done()
		return sandbox.Exit{Code: 137, Signal: "KILL"}, nil
	}
	fmt.Fprintf(io.Stdout, "ran %s in %s\n", strings.Join(r.Argv, " "), r.Workdir)
	fmt.Fprintf(io.Stderr, "env FOO=%s\n", r.Env["FOO"])
	return sandbox.Exit{Code: 7}, nil
}
func (echoSandbox) Teardown(context.Context, string) (sandbox.Released, error) {
	return sandbox.Released{}, nil
}

// hostTool runs a command through the kernel's Host service.
type hostTool struct{}

func (hostTool) Spec() tool.Spec {
	return tool.Spec{Name: "run", Description: "runs argv via Host", Risk: tool.RiskExec,
		InputSchema: []byte(`{"type":"object","properties":{"argv":{"type":"array"}}}`)}
}
func (hostTool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var args struct{ Argv []string }
	if err := c.DecodeArguments(&args); err != nil {
		return tool.Errorf("%v", err), nil
	}
	fmt.Fprintf(c.Output, "running %v\n", args.Argv)
	var out strings.Builder
	exit, err := c.Host.Exec(ctx, sandbox.ExecRequest{Argv: args.Argv}, sandbox.IO{Stdout: &out})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: fmt.Sprintf("exit %d: %s", exit.Code, out.String())}, nil
}

type badArgsTool struct{}

func (badArgsTool) Spec() tool.Spec {
	return tool.Spec{Name: "strict", Description: "rejects unknown arguments", Risk: tool.RiskReadOnly,
		InputSchema: []byte(`{"type":"object"}`), PathArguments: []string{"path"}}
}
func (badArgsTool) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var args struct{ Path string }
	if err := c.DecodeArguments(&args); err != nil {
		return tool.Errorf("%v", err), nil
	}
	return tool.Result{Content: args.Path}, nil
}

// garbageSpecTool passes the SDK's own checks but lies on the wire about
// its schema; see the raw server override below.
type garbageSpecTool struct{}

func (garbageSpecTool) Spec() tool.Spec {
	return tool.Spec{Name: "garbage", Risk: tool.RiskReadOnly, InputSchema: []byte(`{"type":"object"}`)}
}
func (garbageSpecTool) Invoke(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{Metadata: []byte("{not json")}, nil
}

type chatty struct{ crash bool }

func (*chatty) Name() string { return "chatty" }
func (*chatty) Models(context.Context) ([]provider.Model, error) {
	return []provider.Model{{ID: "chatty-1", ContextWindow: 8192, InputPricePerMTok: 1.5}}, nil
}
func (c *chatty) Chat(ctx context.Context, r provider.Request, send func(provider.Event) error) error {
	if r.Model == "rate-limited" {
		return &provider.Error{Class: provider.ErrRateLimited, Message: "slow down", RetryAfter: 1500 * time.Millisecond, HTTPStatus: 429}
	}
	for _, e := range []provider.Event{
		{Thinking: &provider.Thinking{Text: "hmm"}},
		{Text: "Hello, "},
		{Text: r.Messages[0].Parts[0].Text},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "call_1", Name: "run", ArgumentsDelta: `{"argv":`}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ArgumentsDelta: `["ls"]}`}},
	} {
		if err := send(e); err != nil {
			return err
		}
	}
	if c.crash {
		time.Sleep(200 * time.Millisecond) // let the deltas reach the kernel
		var frames []int
		_ = frames[len(r.Messages)+2] // index out of range [3] with length 0
	}
	if err := send(provider.Event{Usage: &provider.Usage{InputTokens: 12, OutputTokens: 5}}); err != nil {
		return err
	}
	return send(provider.Event{Stop: provider.StopToolUse})
}
