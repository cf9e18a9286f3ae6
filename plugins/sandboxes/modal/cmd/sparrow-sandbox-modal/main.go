// Command sparrow-sandbox-modal is the Modal sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/modal"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(modal.New()) }
