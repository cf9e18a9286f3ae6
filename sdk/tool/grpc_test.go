package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// progress streams three progress lines and answers with metadata that
// echoes what it was called with.
type progress struct{}

func (progress) Spec() tool.Spec {
	return tool.Spec{Name: "progress", Description: "Reads a file, slowly.", Risk: tool.RiskReadOnly,
		InputSchema:   json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		PathArguments: []string{"path"}}
}

func (progress) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := c.DecodeArguments(&args); err != nil {
		return tool.Errorf("%v", err), nil
	}
	for _, line := range []string{"reading " + args.Path + "\n", "50%\n", "done\n"} {
		if _, err := io.WriteString(c.Output, line); err != nil {
			return tool.Result{}, err
		}
	}
	meta, _ := json.Marshal(map[string]string{"call": c.ID, "workspace": c.Workspace, "path": args.Path})
	return tool.Result{Content: "contents of " + args.Path, Metadata: meta}, nil
}

// failing returns a Go error: the plugin itself failed.
type failing struct{}

func (failing) Spec() tool.Spec {
	return tool.Spec{Name: "failing", Risk: tool.RiskMutating, InputSchema: json.RawMessage(`{}`)}
}
func (failing) Invoke(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{}, errors.New("disk on fire")
}

// badMeta answers with metadata that is not JSON.
type badMeta struct{}

func (badMeta) Spec() tool.Spec {
	return tool.Spec{Name: "bad_meta", Risk: tool.RiskReadOnly, InputSchema: json.RawMessage(`{}`)}
}
func (badMeta) Invoke(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok", Metadata: json.RawMessage(`{not json`)}, nil
}

// runner runs its argv through the kernel's Host service.
type runner struct{}

func (runner) Spec() tool.Spec {
	return tool.Spec{Name: "runner", Description: "Runs a command.", Risk: tool.RiskExec,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}}}`)}
}

func (runner) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var args struct {
		Argv []string `json:"argv"`
	}
	if err := c.DecodeArguments(&args); err != nil {
		return tool.Errorf("%v", err), nil
	}
	var stdout, stderr strings.Builder
	exit, err := c.Host.Exec(ctx, sandbox.ExecRequest{
		Argv: args.Argv, Workdir: "sub", Env: map[string]string{"LANG": "C"},
		Limits: sandbox.Limits{Timeout: 5 * time.Second, MaxOutputBytes: 1 << 20},
	}, sandbox.IO{Stdin: strings.NewReader("ping"), Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		return tool.Errorf("host: %v", err), nil
	}
	return tool.Result{Content: fmt.Sprintf("exit %d; stdout %q; stderr %q", exit.Code, stdout.String(), stderr.String()), IsError: exit.Code != 0}, nil
}

var served = []tool.Tool{progress{}, failing{}, badMeta{}, runner{}}

// hostCall is what the kernel's Host handler saw.
type hostCall struct {
	Token string
	Req   sandbox.ExecRequest
	Stdin string
}

// recordingHost is a kernel-side Host handler that records each call and
// answers "pong" on stdout.
type recordingHost struct {
	mu    sync.Mutex
	calls []hostCall
	fail  error
}

func (h *recordingHost) handle(_ context.Context, token string, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	in, err := io.ReadAll(sio.Stdin)
	if err != nil {
		return sandbox.Exit{}, err
	}
	h.mu.Lock()
	h.calls = append(h.calls, hostCall{Token: token, Req: req, Stdin: string(in)})
	h.mu.Unlock()
	if h.fail != nil {
		return sandbox.Exit{}, h.fail
	}
	fmt.Fprintf(sio.Stdout, "pong after %s", in)
	fmt.Fprint(sio.Stderr, "a warning")
	return sandbox.Exit{Code: 4}, nil
}

func (h *recordingHost) recorded() []hostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostCall(nil), h.calls...)
}

// conn is a tool plugin served in-process over real gRPC.
type conn struct {
	client *tool.Client
	raw    *goplugin.GRPCClient
}

// connect serves p in-process; one value plays both sides, as go-plugin's
// test helper expects.
func connect(t *testing.T, multiplex bool, p goplugin.Plugin) conn {
	t.Helper()
	rpc, _ := goplugin.TestPluginGRPCConn(t, multiplex, map[string]goplugin.Plugin{"tool": p})
	t.Cleanup(func() { rpc.Close() })
	raw, err := rpc.Dispense("tool")
	if err != nil {
		t.Fatal(err)
	}
	return conn{client: raw.(*tool.Client), raw: rpc}
}

// remoteTools describes the plugin's tools and indexes them by name.
func remoteTools(t *testing.T, c *tool.Client) map[string]tool.Tool {
	t.Helper()
	if _, err := c.Info(t.Context(), "test"); err != nil {
		t.Fatal(err)
	}
	tools, err := c.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tool.Tool{}
	for _, tl := range tools {
		out[tl.Spec().Name] = tl
	}
	return out
}

func TestDescribeRoundTripsSpecs(t *testing.T) {
	c := connect(t, false, &tool.Plugin{Tools: served})
	tools, err := c.client.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want, got []tool.Spec
	for _, tl := range served {
		want = append(want, tl.Spec())
	}
	for _, tl := range tools {
		got = append(got, tl.Spec())
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("specs (-served +described):\n%s", d)
	}
	info, err := c.client.Info(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, comp := range info.Components {
		names = append(names, comp.Name+": "+comp.Description)
	}
	if d := cmp.Diff([]string{"progress: Reads a file, slowly.", "failing: ", "bad_meta: ", "runner: Runs a command."}, names); d != "" {
		t.Errorf("info names tools by spec (-want +got):\n%s", d)
	}
}

// chunks records each write separately.
type chunks struct {
	mu     sync.Mutex
	writes []string
}

func (c *chunks) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func TestInvokeStreamsOutputThenResult(t *testing.T) {
	tools := remoteTools(t, connect(t, false, &tool.Plugin{Tools: served}).client)
	var out chunks
	res, err := tools["progress"].Invoke(t.Context(), &tool.Call{
		ID: "toolu_1", Arguments: json.RawMessage(`{"path":"a.go"}`), Workspace: "/home/ada/proj", Output: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"reading a.go\n", "50%\n", "done\n"}, out.writes); d != "" {
		t.Errorf("output chunks, in order (-want +got):\n%s", d)
	}
	want := tool.Result{Content: "contents of a.go", Metadata: json.RawMessage(`{"call":"toolu_1","path":"a.go","workspace":"/home/ada/proj"}`)}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	// A nil Output discards progress rather than failing the call.
	if res, err := tools["progress"].Invoke(t.Context(), &tool.Call{Arguments: json.RawMessage(`{"path":"b.go"}`)}); err != nil || res.Content != "contents of b.go" {
		t.Errorf("nil output: %+v, %v", res, err)
	}
}

// brokenWriter fails every write.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("terminal gone") }

func TestInvokeFailures(t *testing.T) {
	tools := remoteTools(t, connect(t, false, &tool.Plugin{Tools: served}).client)
	cases := []struct {
		name   string
		tool   string
		args   string
		output io.Writer
		code   codes.Code // when the call fails with a gRPC status
		err    string     // when the call fails
		result *tool.Result
	}{
		{name: "arguments not JSON", tool: "progress", args: `{"path":`, code: codes.InvalidArgument, err: "tool progress: arguments are not JSON"},
		{name: "tool fails", tool: "failing", args: `{}`, code: codes.Unknown, err: "tool failing: disk on fire"},
		{name: "metadata not JSON", tool: "bad_meta", args: `{}`, err: "tool bad_meta: result metadata is not JSON"},
		{name: "output cannot be written", tool: "progress", args: `{"path":"a"}`, output: brokenWriter{}, err: "tool progress: write output: terminal gone"},
		{name: "a typo is the model's to fix", tool: "progress", args: `{"pth":"a.go"}`,
			result: &tool.Result{Content: `arguments: json: unknown field "pth"`, IsError: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.output
			if out == nil {
				out = io.Discard
			}
			res, err := tools[tc.tool].Invoke(t.Context(), &tool.Call{ID: "c", Arguments: json.RawMessage(tc.args), Output: out})
			if tc.result != nil {
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(*tc.result, res); d != "" {
					t.Errorf("result (-want +got):\n%s", d)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if tc.code != codes.OK && status.Code(err) != tc.code {
				t.Errorf("code = %v, want %v", status.Code(err), tc.code)
			}
		})
	}
}

func TestInvokeUnknownToolIsNotFound(t *testing.T) {
	c := connect(t, false, &tool.Plugin{Tools: served})
	stream, err := pb.NewToolClient(c.raw.Conn).Invoke(t.Context(), &pb.InvokeRequest{Tool: "rm_rf", ArgumentsJson: "{}"})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `no tool "rm_rf" in this plugin`) {
		t.Fatalf("err = %v", err)
	}
}

func TestHostExecReachesKernelWithToken(t *testing.T) {
	for _, multiplex := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "multiplexed"}[multiplex], func(t *testing.T) {
			host := &recordingHost{}
			p := &tool.Plugin{Tools: served, Host: func(s *grpc.Server) { sandbox.RegisterHost(s, host.handle) }}
			tools := remoteTools(t, connect(t, multiplex, p).client)
			for _, token := range []string{"tok-1", "tok-2"} {
				res, err := tools["runner"].Invoke(t.Context(), &tool.Call{ID: "c-" + token, Arguments: json.RawMessage(`{"argv":["echo","hi"]}`), Token: token})
				if err != nil {
					t.Fatal(err)
				}
				want := tool.Result{Content: `exit 4; stdout "pong after ping"; stderr "a warning"`, IsError: true}
				if d := cmp.Diff(want, res); d != "" {
					t.Errorf("result (-want +got):\n%s", d)
				}
			}
			req := sandbox.ExecRequest{Argv: []string{"echo", "hi"}, Workdir: "sub", Env: map[string]string{"LANG": "C"},
				Limits: sandbox.Limits{Timeout: 5 * time.Second, MaxOutputBytes: 1 << 20}}
			want := []hostCall{{Token: "tok-1", Req: req, Stdin: "ping"}, {Token: "tok-2", Req: req, Stdin: "ping"}}
			if d := cmp.Diff(want, host.recorded()); d != "" {
				t.Errorf("host calls (-want +got):\n%s", d)
			}
		})
	}
}

func TestHostRefusals(t *testing.T) {
	cases := []struct {
		name  string
		host  *recordingHost // nil: the kernel offers no Host
		token string
		want  string
	}{
		{"call granted no host", &recordingHost{}, "", "host: the kernel granted this call no Host access"},
		{"kernel offers no host", nil, "tok", "host: the kernel offers no Host service to this plugin"},
		{"kernel refuses", &recordingHost{fail: errors.New("unknown or expired call token")}, "stale", "host: rpc error: code = Unknown desc = unknown or expired call token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &tool.Plugin{Tools: served}
			if tc.host != nil {
				p.Host = func(s *grpc.Server) { sandbox.RegisterHost(s, tc.host.handle) }
			}
			tools := remoteTools(t, connect(t, false, p).client)
			res, err := tools["runner"].Invoke(t.Context(), &tool.Call{Arguments: json.RawMessage(`{"argv":["id"]}`), Token: tc.token})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Content != tc.want {
				t.Errorf("result = %+v, want error %q", res, tc.want)
			}
			if tc.host != nil && tc.token == "" && len(tc.host.recorded()) != 0 {
				t.Error("a call without a token reached the kernel")
			}
		})
	}
}

func TestGRPCServerRefusesBadTools(t *testing.T) {
	cases := []struct {
		name  string
		tools []tool.Tool
		want  string
	}{
		{"invalid spec", []tool.Tool{progress{}, specOnly{tool.Spec{Name: "bad name", Risk: tool.RiskReadOnly, InputSchema: json.RawMessage(`{}`)}}}, `tool name "bad name"`},
		{"no risk", []tool.Tool{specOnly{tool.Spec{Name: "x", InputSchema: json.RawMessage(`{}`)}}}, "tool x: unknown risk level"},
		{"served twice", []tool.Tool{progress{}, progress{}}, `tool component "progress" served twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := (&tool.Plugin{Tools: tc.tools}).GRPCServer(nil, grpc.NewServer())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

type specOnly struct{ spec tool.Spec }

func (s specOnly) Spec() tool.Spec { return s.spec }
func (specOnly) Invoke(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{}, nil
}

// rawTool serves a hand-written Tool service, to play a plugin that
// breaks the protocol; the kernel side is the SDK's.
type rawTool struct {
	goplugin.NetRPCUnsupportedPlugin
	srv pb.ToolServer
}

func (r *rawTool) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterToolServer(s, r.srv)
	return nil
}

func (r *rawTool) GRPCClient(ctx context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return (&tool.Plugin{}).GRPCClient(ctx, b, c)
}

type lyingTool struct {
	pb.UnimplementedToolServer
	desc   []*pb.ToolDescriptor
	events []*pb.InvokeEvent
}

func (l *lyingTool) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Tools: l.desc}, nil
}

func (l *lyingTool) Invoke(_ *pb.InvokeRequest, stream pb.Tool_InvokeServer) error {
	for _, ev := range l.events {
		if err := stream.Send(ev); err != nil {
			return err
		}
	}
	return nil
}

func TestKernelRefusesMalformedDescriptions(t *testing.T) {
	good := func() *pb.ToolDescriptor {
		return &pb.ToolDescriptor{Name: "ok", InputSchemaJson: `{}`, Risk: pb.RiskLevel_RISK_LEVEL_READ_ONLY}
	}
	cases := []struct {
		name string
		edit func(*pb.ToolDescriptor)
		want string
	}{
		{"risk unspecified", func(d *pb.ToolDescriptor) { d.Risk = pb.RiskLevel_RISK_LEVEL_UNSPECIFIED }, `unknown risk level ""`},
		{"risk from the future", func(d *pb.ToolDescriptor) { d.Risk = pb.RiskLevel(17) }, `unknown risk level ""`},
		{"bad name", func(d *pb.ToolDescriptor) { d.Name = "rm -rf" }, `tool name "rm -rf"`},
		{"schema not JSON", func(d *pb.ToolDescriptor) { d.InputSchemaJson = "{" }, "input schema is not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := good()
			tc.edit(d)
			c := connect(t, false, &rawTool{srv: &lyingTool{desc: []*pb.ToolDescriptor{good(), d}}})
			_, err := c.client.Tools(t.Context())
			if err == nil || !strings.Contains(err.Error(), "plugin sent a bad tool description: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestKernelRefusesBrokenInvokeStreams(t *testing.T) {
	output := &pb.InvokeEvent{Event: &pb.InvokeEvent_Output{Output: &pb.OutputChunk{Data: []byte("working\n")}}}
	cases := []struct {
		name   string
		events []*pb.InvokeEvent
		want   string
	}{
		{"no result", []*pb.InvokeEvent{output}, "tool ok: stream ended without a result"},
		{"empty event", []*pb.InvokeEvent{output, {}}, "tool ok: unexpected message in invoke stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := &lyingTool{
				desc:   []*pb.ToolDescriptor{{Name: "ok", InputSchemaJson: `{}`, Risk: pb.RiskLevel_RISK_LEVEL_READ_ONLY}},
				events: tc.events,
			}
			tools, err := connect(t, false, &rawTool{srv: srv}).client.Tools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			_, err = tools[0].Invoke(t.Context(), &tool.Call{Arguments: json.RawMessage(`{}`), Output: &out})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if out.String() != "working\n" {
				t.Errorf("output before the failure = %q", out.String())
			}
		})
	}
}

// TestEmptyArgumentsAreAnEmptyObject: DecodeArguments treats no arguments
// as {}, so a call with none must reach the tool rather than fail on the
// wire.
func TestEmptyArgumentsAreAnEmptyObject(t *testing.T) {
	tools := remoteTools(t, connect(t, false, &tool.Plugin{Tools: served}).client)
	res, err := tools["progress"].Invoke(t.Context(), &tool.Call{ID: "c"})
	if err != nil || res.Content != "contents of " {
		t.Fatalf("result %+v, %v", res, err)
	}
}

// TestNullSchemaIsNotAnObject: `null` unmarshals into a map without error.
func TestNullSchemaIsNotAnObject(t *testing.T) {
	err := tool.ValidateSpec(tool.Spec{Name: "x", Risk: tool.RiskReadOnly, InputSchema: json.RawMessage(`null`)})
	if err == nil || !strings.Contains(err.Error(), "input schema is not a JSON object") {
		t.Fatalf("err = %v", err)
	}
}

// chatterbox writes progress until its context ends, and says when it
// stopped.
type chatterbox struct{ stopped chan struct{} }

func (chatterbox) Spec() tool.Spec {
	return tool.Spec{Name: "chatterbox", Risk: tool.RiskReadOnly, InputSchema: json.RawMessage(`{}`)}
}

func (c chatterbox) Invoke(ctx context.Context, call *tool.Call) (tool.Result, error) {
	defer close(c.stopped)
	for ctx.Err() == nil {
		if _, err := io.WriteString(call.Output, "still going\n"); err != nil {
			return tool.Result{}, err
		}
	}
	return tool.Result{}, ctx.Err()
}

// TestAbandonedInvokeStopsTheTool: when the kernel gives up on a call (its
// output writer failed), the plugin's Invoke must see its context end.
func TestAbandonedInvokeStopsTheTool(t *testing.T) {
	c := chatterbox{stopped: make(chan struct{})}
	tools := remoteTools(t, connect(t, false, &tool.Plugin{Tools: []tool.Tool{c}}).client)
	_, err := tools["chatterbox"].Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(`{}`), Output: brokenWriter{}})
	if err == nil || !strings.Contains(err.Error(), "terminal gone") {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-c.stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("the tool is still running a call nobody reads")
	}
}
