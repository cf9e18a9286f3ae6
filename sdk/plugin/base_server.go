package plugin

import (
	"context"
	"fmt"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sparrow-cli/sparrow/sdk"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// BaseServer serves the base Plugin service for a set of components and
// keeps the connection back to the kernel's Host service. Kind packages
// create one in their GRPCServer method.
type BaseServer struct {
	pb.UnimplementedPluginServer

	kind       Kind
	broker     *goplugin.GRPCBroker
	components map[string]Component
	order      []string

	mu       sync.Mutex
	hostID   uint32
	hostConn *grpc.ClientConn
}

var kindToProto = map[Kind]pb.Kind{
	KindProvider: pb.Kind_KIND_PROVIDER,
	KindTool:     pb.Kind_KIND_TOOL,
	KindSandbox:  pb.Kind_KIND_SANDBOX,
	KindSurface:  pb.Kind_KIND_SURFACE,
}

// NewBaseServer returns a BaseServer for components of one kind. Component
// names must be unique and non-empty.
func NewBaseServer(kind Kind, broker *goplugin.GRPCBroker, components []Component) (*BaseServer, error) {
	s := &BaseServer{kind: kind, broker: broker, components: map[string]Component{}}
	for _, c := range components {
		name := c.Name()
		if name == "" {
			return nil, fmt.Errorf("a %s component has an empty name", kind)
		}
		if _, dup := s.components[name]; dup {
			return nil, fmt.Errorf("%s component %q served twice", kind, name)
		}
		s.components[name] = c
		s.order = append(s.order, name)
	}
	return s, nil
}

// Component returns the named component, or a NotFound status error that
// the kernel reports with the plugin's name.
func (s *BaseServer) Component(name string) (Component, error) {
	c, ok := s.components[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no %s component %q in this plugin", s.kind, name)
	}
	return c, nil
}

// Info implements the base contract.
func (s *BaseServer) Info(_ context.Context, req *pb.InfoRequest) (*pb.InfoResponse, error) {
	s.mu.Lock()
	s.hostID = req.GetHostBrokerId()
	s.mu.Unlock()
	if s.hostID != 0 {
		// go-plugin's broker keeps the Host's connection info for five
		// seconds after the kernel sends it, at start; the first Host call
		// may come much later (a sandbox that takes long to prepare). Take
		// it now; a failure is reported by that call.
		_, _ = s.HostConn()
	}
	resp := &pb.InfoResponse{Kind: kindToProto[s.kind], SdkVersion: sdk.Version}
	for _, name := range s.order {
		c := &pb.Component{Name: name}
		if d, ok := s.components[name].(Describer); ok {
			c.Description = d.Description()
		}
		resp.Components = append(resp.Components, c)
	}
	return resp, nil
}

// Schema implements the base contract.
func (s *BaseServer) Schema(_ context.Context, req *pb.SchemaRequest) (*pb.SchemaResponse, error) {
	c, err := s.Component(req.GetComponent())
	if err != nil {
		return nil, err
	}
	cfg, ok := c.(Configurable)
	if !ok {
		return &pb.SchemaResponse{Schema: &pb.ConfigSchema{}}, nil
	}
	schema, err := SchemaToProto(cfg.ConfigSchema())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "component %q: %v", req.GetComponent(), err)
	}
	return &pb.SchemaResponse{Schema: schema}, nil
}

// Configure implements the base contract.
func (s *BaseServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	c, err := s.Component(req.GetComponent())
	if err != nil {
		return nil, err
	}
	cfg, ok := c.(Configurable)
	if !ok {
		return &pb.ConfigureResponse{}, nil
	}
	if err := cfg.Configure(ctx, Config{Values: req.GetConfigJson(), Workspace: req.GetWorkspace(), StateDir: req.GetStateDir()}); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "configure %q: %v", req.GetComponent(), err)
	}
	return &pb.ConfigureResponse{}, nil
}

// HostConn dials the kernel's Host service once and returns the shared
// connection. It fails when the kernel offered no Host to this plugin.
func (s *BaseServer) HostConn() (*grpc.ClientConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hostConn != nil {
		return s.hostConn, nil
	}
	if s.hostID == 0 || s.broker == nil {
		return nil, fmt.Errorf("the kernel offers no Host service to this plugin")
	}
	conn, err := s.broker.Dial(s.hostID)
	if err != nil {
		return nil, fmt.Errorf("dial kernel host service: %w", err)
	}
	s.hostConn = conn
	return conn, nil
}
