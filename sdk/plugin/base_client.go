package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// Info is what a plugin process says about itself.
type Info struct {
	Kind       Kind
	SDKVersion string
	Components []ComponentInfo
}

// ComponentInfo names one component of a plugin.
type ComponentInfo struct {
	Name        string
	Description string
}

// HostRegistrar registers the kernel's Host service on a gRPC server the
// broker starts for a plugin. Nil means the plugin gets no Host.
type HostRegistrar func(*grpc.Server)

// BaseClient is the kernel's side of the base contract. Kind packages embed
// it in their clients.
type BaseClient struct {
	client pb.PluginClient
	hostID uint32
}

// NewBaseClient wraps a plugin connection. When host is non-nil it serves the
// kernel's Host service on the broker, so the plugin can call back.
func NewBaseClient(conn *grpc.ClientConn, broker *goplugin.GRPCBroker, host HostRegistrar) *BaseClient {
	c := &BaseClient{client: pb.NewPluginClient(conn)}
	if host != nil && broker != nil {
		c.hostID = broker.NextId()
		go broker.AcceptAndServe(c.hostID, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(opts...)
			host(s)
			return s
		})
	}
	return c
}

// Info asks the plugin what it is, and tells it where the Host service is.
// It rejects answers a well-behaved plugin never gives.
func (c *BaseClient) Info(ctx context.Context, sparrowVersion string) (Info, error) {
	resp, err := c.client.Info(ctx, &pb.InfoRequest{HostBrokerId: c.hostID, SparrowVersion: sparrowVersion})
	if err != nil {
		return Info{}, err
	}
	info := Info{SDKVersion: resp.GetSdkVersion()}
	for k, v := range kindToProto {
		if v == resp.GetKind() {
			info.Kind = k
		}
	}
	if info.Kind == "" {
		return Info{}, fmt.Errorf("plugin reported an unknown kind %v", resp.GetKind())
	}
	seen := map[string]bool{}
	for _, comp := range resp.GetComponents() {
		if comp.GetName() == "" || seen[comp.GetName()] {
			return Info{}, fmt.Errorf("plugin reported an empty or duplicate component name %q", comp.GetName())
		}
		seen[comp.GetName()] = true
		info.Components = append(info.Components, ComponentInfo{Name: comp.GetName(), Description: comp.GetDescription()})
	}
	return info, nil
}

// Schema fetches the configuration schema of a component.
func (c *BaseClient) Schema(ctx context.Context, component string) (Schema, error) {
	resp, err := c.client.Schema(ctx, &pb.SchemaRequest{Component: component})
	if err != nil {
		return Schema{}, err
	}
	s, err := SchemaFromProto(resp.GetSchema())
	if err != nil {
		return Schema{}, fmt.Errorf("component %q sent a bad config schema: %w", component, err)
	}
	return s, nil
}

// Configure hands a component its decoded configuration.
func (c *BaseClient) Configure(ctx context.Context, component string, cfg Config) error {
	if len(cfg.Values) > 0 && !json.Valid(cfg.Values) {
		return fmt.Errorf("configure %q: values are not JSON", component)
	}
	_, err := c.client.Configure(ctx, &pb.ConfigureRequest{
		Component: component, ConfigJson: cfg.Values, Workspace: cfg.Workspace, StateDir: cfg.StateDir,
	})
	return err
}
