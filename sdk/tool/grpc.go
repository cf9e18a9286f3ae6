package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Serve runs a tool plugin serving the given tools until the kernel
// disconnects. A plugin's main is one call:
//
//	func main() { tool.Serve(readFile{}, writeFile{}) }
func Serve(tools ...Tool) {
	plugin.Serve(plugin.KindTool, &Plugin{Tools: tools})
}

// Plugin is the go-plugin glue between Tool and the gRPC protocol. Plugin
// authors use Serve; the kernel uses Plugin with Host set.
type Plugin struct {
	goplugin.NetRPCUnsupportedPlugin
	// Tools are the tools served (plugin side).
	Tools []Tool
	// Host serves the kernel's Host service to the plugin (kernel side).
	Host plugin.HostRegistrar
}

// GRPCServer registers the base and Tool services (plugin side).
func (p *Plugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	comps := make([]component, len(p.Tools))
	for i, t := range p.Tools {
		if err := ValidateSpec(t.Spec()); err != nil {
			return err
		}
		comps[i] = component{t}
	}
	byName, base, err := plugin.Register(plugin.KindTool, broker, s, comps)
	if err != nil {
		return err
	}
	pb.RegisterToolServer(s, &server{base: base, tools: p.Tools, byName: byName})
	return nil
}

// GRPCClient returns a *Client (kernel side).
func (p *Plugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Client{BaseClient: plugin.NewBaseClient(conn, broker, p.Host), rpc: pb.NewToolClient(conn)}, nil
}

// component lets a Tool stand in the base contract, named by its spec.
type component struct{ Tool }

func (c component) Name() string        { return c.Spec().Name }
func (c component) Description() string { return c.Spec().Description }

func (c component) ConfigSchema() plugin.Schema {
	if cfg, ok := c.Tool.(plugin.Configurable); ok {
		return cfg.ConfigSchema()
	}
	return plugin.Schema{}
}

func (c component) Configure(ctx context.Context, cfg plugin.Config) error {
	if cc, ok := c.Tool.(plugin.Configurable); ok {
		return cc.Configure(ctx, cfg)
	}
	return nil
}

// validName reports whether s is 1-64 letters, digits, '_' or '-', the
// tool names every model API accepts.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// ValidateSpec checks what model APIs and the gate require of a spec.
func ValidateSpec(s Spec) error {
	if !validName(s.Name) {
		return fmt.Errorf("tool name %q: want 1-64 letters, digits, '_' or '-'", s.Name)
	}
	if _, err := ParseRisk(string(s.Risk)); err != nil {
		return fmt.Errorf("tool %s: %w", s.Name, err)
	}
	var schema map[string]any
	if err := json.Unmarshal(s.InputSchema, &schema); err != nil || schema == nil {
		return fmt.Errorf("tool %s: input schema is not a JSON object", s.Name)
	}
	return nil
}

type server struct {
	pb.UnimplementedToolServer
	base   *plugin.BaseServer
	tools  []Tool
	byName plugin.Components[component]
}

func (s *server) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	resp := &pb.DescribeResponse{}
	for _, t := range s.tools {
		resp.Tools = append(resp.Tools, specToProto(t.Spec()))
	}
	return resp, nil
}

func (s *server) Invoke(req *pb.InvokeRequest, stream pb.Tool_InvokeServer) error {
	t, err := s.byName.Get(plugin.KindTool, req.GetTool())
	if err != nil {
		return err
	}
	if !json.Valid([]byte(req.GetArgumentsJson())) {
		return status.Errorf(codes.InvalidArgument, "tool %s: arguments are not JSON", req.GetTool())
	}
	call := &Call{
		ID: req.GetCallId(), Arguments: json.RawMessage(req.GetArgumentsJson()), Workspace: req.GetWorkspace(),
		Output: outputWriter{stream}, Token: req.GetHostToken(),
	}
	call.Host = &lazyHost{base: s.base, token: call.Token}
	res, err := t.Invoke(stream.Context(), call)
	if err != nil {
		return status.Errorf(codes.Unknown, "tool %s: %v", req.GetTool(), err)
	}
	return stream.Send(&pb.InvokeEvent{Event: &pb.InvokeEvent_Result{Result: &pb.ToolResultPayload{
		Content: res.Content, IsError: res.IsError, MetadataJson: string(res.Metadata),
	}}})
}

type outputWriter struct{ stream pb.Tool_InvokeServer }

func (w outputWriter) Write(p []byte) (int, error) {
	err := w.stream.Send(&pb.InvokeEvent{Event: &pb.InvokeEvent_Output{Output: &pb.OutputChunk{
		Stream: pb.OutputStream_OUTPUT_STREAM_STDOUT, Data: append([]byte(nil), p...),
	}}})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// lazyHost dials the kernel's Host service on first use.
type lazyHost struct {
	base  *plugin.BaseServer
	token string
}

func (h *lazyHost) Exec(ctx context.Context, req sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	if h.token == "" {
		return sandbox.Exit{}, errors.New("the kernel granted this call no Host access")
	}
	conn, err := h.base.HostConn()
	if err != nil {
		return sandbox.Exit{}, err
	}
	return sandbox.NewHostClient(conn, h.token).Exec(ctx, req, io)
}

// Client is the kernel's handle on a tool plugin process.
type Client struct {
	*plugin.BaseClient
	rpc pb.ToolClient
}

// Tools describes every tool the plugin serves, rejecting malformed specs.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	resp, err := c.rpc.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, err
	}
	var tools []Tool
	for _, d := range resp.GetTools() {
		spec := specFromProto(d)
		if err := ValidateSpec(spec); err != nil {
			return nil, fmt.Errorf("plugin sent a bad tool description: %w", err)
		}
		tools = append(tools, &remote{spec: spec, rpc: c.rpc})
	}
	return tools, nil
}

// remote is a Tool served by a plugin process. Its Invoke streams output
// into call.Output and passes call.Token so the plugin can reach Host.
type remote struct {
	spec Spec
	rpc  pb.ToolClient
}

func (r *remote) Spec() Spec { return r.spec }

func (r *remote) Invoke(ctx context.Context, call *Call) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := string(call.Arguments)
	if args == "" {
		args = "{}"
	}
	stream, err := r.rpc.Invoke(ctx, &pb.InvokeRequest{
		Tool: r.spec.Name, CallId: call.ID, ArgumentsJson: args,
		Workspace: call.Workspace, HostToken: call.Token,
	})
	if err != nil {
		return Result{}, err
	}
	out := call.Output
	if out == nil {
		out = io.Discard
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Result{}, fmt.Errorf("tool %s: stream ended without a result", r.spec.Name)
			}
			return Result{}, err
		}
		switch v := ev.GetEvent().(type) {
		case *pb.InvokeEvent_Output:
			if _, err := out.Write(v.Output.GetData()); err != nil {
				return Result{}, fmt.Errorf("tool %s: write output: %w", r.spec.Name, err)
			}
		case *pb.InvokeEvent_Result:
			res := Result{Content: v.Result.GetContent(), IsError: v.Result.GetIsError()}
			if m := v.Result.GetMetadataJson(); m != "" {
				if !json.Valid([]byte(m)) {
					return Result{}, fmt.Errorf("tool %s: result metadata is not JSON", r.spec.Name)
				}
				res.Metadata = json.RawMessage(m)
			}
			return res, nil
		default:
			return Result{}, fmt.Errorf("tool %s: unexpected message in invoke stream", r.spec.Name)
		}
	}
}

var (
	_ Tool                = (*remote)(nil)
	_ goplugin.GRPCPlugin = (*Plugin)(nil)
	_ plugin.Configurable = component{}
)
