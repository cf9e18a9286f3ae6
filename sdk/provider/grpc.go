package provider

import (
	"context"
	"errors"
	"fmt"
	"io"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// Serve runs a provider plugin serving the given providers until the kernel
// disconnects. A plugin's main is one call:
//
//	func main() { provider.Serve(&openAI{}) }
func Serve(providers ...Provider) {
	plugin.Serve(plugin.KindProvider, &Plugin{Providers: providers})
}

// Plugin is the go-plugin glue between Provider and the gRPC protocol.
// Plugin authors use Serve; the kernel uses Plugin with Host set.
type Plugin struct {
	goplugin.NetRPCUnsupportedPlugin
	// Providers are the providers served (plugin side).
	Providers []Provider
	// Host serves the kernel's Host service to the plugin (kernel side).
	Host plugin.HostRegistrar
}

// GRPCServer registers the base and Provider services (plugin side).
func (p *Plugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	byName, _, err := plugin.Register(plugin.KindProvider, broker, s, p.Providers)
	if err != nil {
		return err
	}
	pb.RegisterProviderServer(s, &server{byName: byName})
	return nil
}

// GRPCClient returns a *Client (kernel side).
func (p *Plugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Client{BaseClient: plugin.NewBaseClient(conn, broker, p.Host), rpc: pb.NewProviderClient(conn)}, nil
}

// Client is the kernel's handle on a provider plugin process.
type Client struct {
	*plugin.BaseClient
	rpc pb.ProviderClient
}

// Provider returns the named provider of the plugin.
func (c *Client) Provider(name string) Provider { return &remote{name: name, rpc: c.rpc} }

type server struct {
	pb.UnimplementedProviderServer
	byName plugin.Components[Provider]
}

func (s *server) get(name string) (Provider, error) { return s.byName.Get(plugin.KindProvider, name) }

func (s *server) Models(ctx context.Context, req *pb.ModelsRequest) (*pb.ModelsResponse, error) {
	p, err := s.get(req.GetComponent())
	if err != nil {
		return nil, err
	}
	models, err := p.Models(ctx)
	if err != nil {
		return nil, err
	}
	resp := &pb.ModelsResponse{}
	for _, m := range models {
		resp.Models = append(resp.Models, modelToProto(m))
	}
	return resp, nil
}

func (s *server) Chat(req *pb.ChatRequest, stream pb.Provider_ChatServer) error {
	p, err := s.get(req.GetComponent())
	if err != nil {
		return err
	}
	r, err := requestFromProto(req)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	err = p.Chat(stream.Context(), r, func(e Event) error {
		m, err := eventToProto(e)
		if err != nil {
			return err
		}
		return stream.Send(m)
	})
	var perr *Error
	if errors.As(err, &perr) {
		return stream.Send(errorToProto(perr))
	}
	return err
}

// remote is a Provider served by a plugin process.
type remote struct {
	name string
	rpc  pb.ProviderClient
}

func (r *remote) Name() string { return r.name }

func (r *remote) Models(ctx context.Context) ([]Model, error) {
	resp, err := r.rpc.Models(ctx, &pb.ModelsRequest{Component: r.name})
	if err != nil {
		return nil, err
	}
	var out []Model
	for _, m := range resp.GetModels() {
		out = append(out, modelFromProto(m))
	}
	return out, nil
}

func (r *remote) Chat(ctx context.Context, req Request, send func(Event) error) error {
	// Ending early (a send error, a bad event) must stop the plugin too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := r.rpc.Chat(ctx, requestToProto(r.name, req))
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		ev, perr, err := eventFromProto(msg)
		if err != nil {
			return fmt.Errorf("provider %s sent a malformed event: %w", r.name, err)
		}
		if perr != nil {
			return perr
		}
		if err := send(ev); err != nil {
			return err
		}
	}
}

var (
	_ Provider            = (*remote)(nil)
	_ goplugin.GRPCPlugin = (*Plugin)(nil)
)
