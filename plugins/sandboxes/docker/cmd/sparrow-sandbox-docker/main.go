// Command sparrow-sandbox-docker is the Docker sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/docker"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(docker.New()) }
