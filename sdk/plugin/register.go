package plugin

import (
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sparrow-cli/sparrow/sdk/proto/sparrow/v1"
)

// Components indexes the components a kind's plugin serves by name.
type Components[T Component] map[string]T

// Get returns the named component, or a NotFound status the kernel reports
// with the plugin's name.
func (c Components[T]) Get(kind Kind, name string) (T, error) {
	v, ok := c[name]
	if !ok {
		return v, status.Errorf(codes.NotFound, "no %s %q in this plugin", kind, name)
	}
	return v, nil
}

// Register checks a kind's components (unique, non-empty names), serves
// the base Plugin service for them on s, and returns them indexed by name
// with the base server, for the kind's own service to use. Kind packages
// call it from their GRPCServer method.
func Register[T Component](kind Kind, broker *goplugin.GRPCBroker, s *grpc.Server, components []T) (Components[T], *BaseServer, error) {
	comps := make([]Component, len(components))
	byName := make(Components[T], len(components))
	for i, c := range components {
		comps[i] = c
		byName[c.Name()] = c
	}
	base, err := NewBaseServer(kind, broker, comps)
	if err != nil {
		return nil, nil, err
	}
	pb.RegisterPluginServer(s, base)
	return byName, base, nil
}
