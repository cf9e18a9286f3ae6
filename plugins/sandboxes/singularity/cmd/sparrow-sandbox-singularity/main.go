// Command sparrow-sandbox-singularity is the Apptainer / SingularityCE
// sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/singularity"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(singularity.New()) }
