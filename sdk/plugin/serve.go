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
// Cleaners run when the kernel dies, however it dies, before the plugin
// exits (see Cleaner). Kind packages call Serve from their own Serve,
// passing the components that implement Cleaner; plugin authors call those.
func Serve(kind Kind, p goplugin.Plugin, cleaners ...Cleaner) {
	setProcessName("sparrow-" + string(kind))
	stop := guard(os.Getppid(), cleaners)
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
