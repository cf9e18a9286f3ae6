package surface

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// Serve runs a surface plugin serving the given surfaces until the kernel
// disconnects. A plugin's main is one call:
//
//	func main() { surface.Serve(&console{}) }
func Serve(surfaces ...Surface) {
	plugin.Serve(plugin.KindSurface, &Plugin{Surfaces: surfaces})
}

// Plugin is the go-plugin glue between Surface and the gRPC protocol.
type Plugin struct {
	goplugin.NetRPCUnsupportedPlugin
	// Surfaces are the surfaces served (plugin side).
	Surfaces []Surface
	// Host serves the kernel's Host service to the plugin (kernel side).
	Host plugin.HostRegistrar
}

// GRPCServer registers the base and Surface services (plugin side).
func (p *Plugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	byName, _, err := plugin.Register(plugin.KindSurface, broker, s, p.Surfaces)
	if err != nil {
		return err
	}
	pb.RegisterSurfaceServer(s, &server{byName: byName})
	return nil
}

// GRPCClient returns a *Client (kernel side).
func (p *Plugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Client{BaseClient: plugin.NewBaseClient(conn, broker, p.Host), rpc: pb.NewSurfaceClient(conn)}, nil
}

// Client is the kernel's handle on a surface plugin process.
type Client struct {
	*plugin.BaseClient
	rpc pb.SurfaceClient
}

// Surface returns the named surface of the plugin. Its Deliver keeps one
// stream open; Close ends it.
func (c *Client) Surface(name string) *Remote { return &Remote{name: name, rpc: c.rpc} }

type server struct {
	pb.UnimplementedSurfaceServer
	byName plugin.Components[Surface]
}

func (s *server) get(name string) (Surface, error) { return s.byName.Get(plugin.KindSurface, name) }

func (s *server) Deliver(stream pb.Surface_DeliverServer) error {
	var sf Surface
	var n uint64
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&pb.DeliverSummary{Delivered: n})
		}
		if err != nil {
			return err
		}
		if sf == nil {
			if sf, err = s.get(req.GetComponent()); err != nil {
				return err
			}
		}
		ev, err := eventFromProto(req.GetEvent())
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		if err := sf.Deliver(stream.Context(), ev); err != nil {
			return err
		}
		n++
	}
}

func (s *server) Commands(req *pb.CommandsRequest, stream pb.Surface_CommandsServer) error {
	sf, err := s.get(req.GetComponent())
	if err != nil {
		return err
	}
	return sf.Commands(stream.Context(), func(c Command) error {
		m, err := commandToProto(c)
		if err != nil {
			return err
		}
		return stream.Send(m)
	})
}

// Remote is a Surface served by a plugin process.
type Remote struct {
	name string
	rpc  pb.SurfaceClient

	mu     sync.Mutex
	stream grpc.ClientStreamingClient[pb.DeliverRequest, pb.DeliverSummary]
	cancel context.CancelFunc
}

// Name returns the surface's name.
func (r *Remote) Name() string { return r.name }

// Deliver sends one event on the surface's delivery stream, opening it on
// first use. The stream outlives ctx; Close ends it.
func (r *Remote) Deliver(_ context.Context, ev Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	req := &pb.DeliverRequest{Event: eventToProto(ev)}
	if r.stream == nil {
		ctx, cancel := context.WithCancel(context.Background())
		stream, err := r.rpc.Deliver(ctx)
		if err != nil {
			cancel()
			return err
		}
		r.stream, r.cancel = stream, cancel
		req.Component = r.name
	}
	if err := r.stream.Send(req); err != nil {
		if !errors.Is(err, io.EOF) {
			return err
		}
		// The plugin ended the stream; its status says why.
		_, err = r.stream.CloseAndRecv()
		r.cancel()
		r.stream = nil
		if err == nil {
			err = fmt.Errorf("surface %s closed its delivery stream", r.name)
		}
		return err
	}
	return nil
}

// Close ends the delivery stream and returns how many events the surface
// accepted.
func (r *Remote) Close() (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream == nil {
		return 0, nil
	}
	defer r.cancel()
	sum, err := r.stream.CloseAndRecv()
	r.stream = nil
	if err != nil {
		return 0, err
	}
	return sum.GetDelivered(), nil
}

// Commands relays the surface's commands to send until ctx ends.
func (r *Remote) Commands(ctx context.Context, send func(Command) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := r.rpc.Commands(ctx, &pb.CommandsRequest{Component: r.name})
	if err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		c, err := commandFromProto(m)
		if err != nil {
			return fmt.Errorf("surface %s sent a malformed command: %w", r.name, err)
		}
		if err := send(c); err != nil {
			return err
		}
	}
}

func eventToProto(e Event) *pb.Event {
	return &pb.Event{
		SchemaVersion: int32(e.SchemaVersion), RunId: e.RunID, AgentId: e.AgentID, Seq: e.Seq,
		Time: e.Time.UTC().Format(time.RFC3339Nano), Type: e.Type, Json: e.JSON,
	}
}

func eventFromProto(e *pb.Event) (Event, error) {
	if e == nil {
		return Event{}, errors.New("deliver request without an event")
	}
	t, err := time.Parse(time.RFC3339Nano, e.GetTime())
	if err != nil {
		return Event{}, fmt.Errorf("event %d: time: %w", e.GetSeq(), err)
	}
	return Event{
		SchemaVersion: int(e.GetSchemaVersion()), RunID: e.GetRunId(), AgentID: e.GetAgentId(), Seq: e.GetSeq(),
		Time: t, Type: e.GetType(), JSON: e.GetJson(),
	}, nil
}

var (
	_ Surface             = (*Remote)(nil)
	_ goplugin.GRPCPlugin = (*Plugin)(nil)
)
