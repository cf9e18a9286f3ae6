// Command sparrow-provider-anthropic is the Anthropic provider plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/providers/anthropic"
	"github.com/sparrow-cli/sparrow/sdk/provider"
)

func main() { provider.Serve(anthropic.New()) }
