// Command sparrow-sandbox-local is the local sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/local"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(local.New()) }
