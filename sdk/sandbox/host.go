package sandbox

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// HostTokenKey is the gRPC metadata key carrying the token that ties a Host
// call to the tool call the kernel granted it for.
const HostTokenKey = "sparrow-host-token"

// Executor runs commands. Tools get one as Call.Host: every command they
// run goes through the kernel's gate and the configured sandbox.
type Executor interface {
	Exec(ctx context.Context, req ExecRequest, io IO) (Exit, error)
}

// HostHandler is the kernel's implementation of Host.Exec. The token names
// the tool call the command belongs to; an unknown token must be refused.
type HostHandler func(ctx context.Context, token string, req ExecRequest, io IO) (Exit, error)

// RegisterHost serves the Host service on s (kernel side).
func RegisterHost(s *grpc.Server, h HostHandler) {
	pb.RegisterHostServer(s, &hostServer{handle: h})
}

type hostServer struct {
	pb.UnimplementedHostServer
	handle HostHandler
}

func (h *hostServer) Exec(stream pb.Host_ExecServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	tokens := md.Get(HostTokenKey)
	if len(tokens) != 1 || tokens[0] == "" {
		return status.Error(codes.Unauthenticated, "host exec without a call token")
	}
	return serveExec(stream, func(ctx context.Context, start *pb.ExecStart, io IO) (Exit, error) {
		return h.handle(ctx, tokens[0], execFromProto(start), io)
	})
}

// NewHostClient returns an Executor that runs commands through the kernel's
// Host service on conn, on behalf of the call identified by token.
func NewHostClient(conn grpc.ClientConnInterface, token string) Executor {
	return &hostClient{rpc: pb.NewHostClient(conn), token: token}
}

type hostClient struct {
	rpc   pb.HostClient
	token string
}

func (c *hostClient) Exec(ctx context.Context, req ExecRequest, io IO) (Exit, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, HostTokenKey, c.token)
	stream, err := c.rpc.Exec(ctx)
	if err != nil {
		return Exit{}, err
	}
	return runExec(ctx, stream, execToProto("", req), io)
}
