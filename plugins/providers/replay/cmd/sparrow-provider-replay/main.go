// Command sparrow-provider-replay is the replay provider plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/providers/replay"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func main() { provider.Serve(replay.New()) }
