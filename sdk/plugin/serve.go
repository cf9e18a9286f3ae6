package plugin

import (
	"os"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk"
)

// Serve runs a plugin of one kind until the kernel disconnects. It never
// outlives the kernel: besides the parent-death signal the kernel sets on
// Linux, it watches its parent and exits when the parent goes away.
//
// Kind packages call it from their own Serve; plugin authors call those.
func Serve(kind Kind, p goplugin.Plugin) {
	setProcessName("sparrow-" + string(kind))
	stop := watchParent(os.Getppid())
	defer stop()
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake(),
		VersionedPlugins: map[int]goplugin.PluginSet{
			sdk.ProtocolVersion: {string(kind): p},
		},
		GRPCServer: goplugin.DefaultGRPCServer,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       string(kind),
			Output:     os.Stderr,
			JSONFormat: true,
			Level:      hclog.Debug,
		}),
	})
}
