// Command sparrow-sandbox-daytona is the Daytona sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/daytona"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(daytona.New()) }
