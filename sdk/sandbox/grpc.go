package sandbox

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// Serve runs a sandbox plugin serving the given backends until the kernel
// disconnects. A plugin's main is one call:
//
//	func main() { sandbox.Serve(&myBackend{}) }
func Serve(backends ...Sandbox) {
	var cleaners []plugin.Cleaner
	for _, b := range backends {
		if c, ok := b.(plugin.Cleaner); ok {
			cleaners = append(cleaners, c)
		}
	}
	plugin.Serve(plugin.KindSandbox, &Plugin{Sandboxes: backends}, cleaners...)
}

// Plugin is the go-plugin glue between Sandbox and the gRPC protocol. Plugin
// authors use Serve; the kernel uses Plugin with Host set.
type Plugin struct {
	goplugin.NetRPCUnsupportedPlugin
	// Sandboxes are the backends served (plugin side).
	Sandboxes []Sandbox
	// Host serves the kernel's Host service to the plugin (kernel side).
	Host plugin.HostRegistrar
}

// GRPCServer registers the base and Sandbox services (plugin side).
func (p *Plugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	byName, _, err := plugin.Register(plugin.KindSandbox, broker, s, p.Sandboxes)
	if err != nil {
		return err
	}
	pb.RegisterSandboxServer(s, &server{byName: byName})
	return nil
}

// GRPCClient returns a *Client (kernel side).
func (p *Plugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Client{BaseClient: plugin.NewBaseClient(conn, broker, p.Host), rpc: pb.NewSandboxClient(conn)}, nil
}

// Client is the kernel's handle on a sandbox plugin process.
type Client struct {
	*plugin.BaseClient
	rpc pb.SandboxClient
}

// Sandbox returns the named backend of the plugin as a Sandbox.
func (c *Client) Sandbox(name string) Sandbox { return &remote{name: name, rpc: c.rpc} }

type server struct {
	pb.UnimplementedSandboxServer
	byName plugin.Components[Sandbox]
}

func (s *server) get(name string) (Sandbox, error) { return s.byName.Get(plugin.KindSandbox, name) }

func (s *server) Capabilities(ctx context.Context, req *pb.CapabilitiesRequest) (*pb.SandboxCapabilities, error) {
	sb, err := s.get(req.GetComponent())
	if err != nil {
		return nil, err
	}
	c, err := sb.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	return capsToProto(c), nil
}

func (s *server) Prepare(ctx context.Context, req *pb.PrepareRequest) (*pb.PrepareResponse, error) {
	sb, err := s.get(req.GetComponent())
	if err != nil {
		return nil, err
	}
	sess, err := sb.Prepare(ctx, PrepareRequest{RunID: req.GetRunId(), Workspace: req.GetWorkspace(), Policy: policyFromProto(req.GetPolicy())})
	if err != nil {
		return nil, err
	}
	return &pb.PrepareResponse{SessionId: sess.ID, Workdir: sess.Workdir, HostWorkspace: sess.HostWorkspace}, nil
}

func (s *server) Exec(stream pb.Sandbox_ExecServer) error {
	return serveExec(stream, func(ctx context.Context, start *pb.ExecStart, io IO) (Exit, error) {
		sb, err := s.get(start.GetComponent())
		if err != nil {
			return Exit{}, err
		}
		return sb.Exec(ctx, execFromProto(start), io)
	})
}

func (s *server) Teardown(ctx context.Context, req *pb.TeardownRequest) (*pb.TeardownResponse, error) {
	sb, err := s.get(req.GetComponent())
	if err != nil {
		return nil, err
	}
	rel, err := sb.Teardown(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	return &pb.TeardownResponse{Notice: rel.Notice}, nil
}

// remote is a Sandbox served by a plugin process.
type remote struct {
	name string
	rpc  pb.SandboxClient
}

func (r *remote) Name() string { return r.name }

func (r *remote) Capabilities(ctx context.Context) (Capabilities, error) {
	c, err := r.rpc.Capabilities(ctx, &pb.CapabilitiesRequest{Component: r.name})
	if err != nil {
		return Capabilities{}, err
	}
	return capsFromProto(c), nil
}

func (r *remote) Prepare(ctx context.Context, req PrepareRequest) (Session, error) {
	resp, err := r.rpc.Prepare(ctx, &pb.PrepareRequest{
		Component: r.name, RunId: req.RunID, Workspace: req.Workspace, Policy: policyToProto(req.Policy),
	})
	if err != nil {
		return Session{}, err
	}
	return Session{ID: resp.GetSessionId(), Workdir: resp.GetWorkdir(), HostWorkspace: resp.GetHostWorkspace()}, nil
}

func (r *remote) Exec(ctx context.Context, req ExecRequest, io IO) (Exit, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := r.rpc.Exec(ctx)
	if err != nil {
		return Exit{}, err
	}
	return runExec(ctx, stream, execToProto(r.name, req), io)
}

func (r *remote) Teardown(ctx context.Context, sessionID string) (Released, error) {
	resp, err := r.rpc.Teardown(ctx, &pb.TeardownRequest{Component: r.name, SessionId: sessionID})
	if err != nil {
		return Released{}, err
	}
	return Released{Notice: resp.GetNotice()}, nil
}

var (
	_ Sandbox             = (*remote)(nil)
	_ goplugin.GRPCPlugin = (*Plugin)(nil)
)
