// Command sparrow-sandbox-vercel is the Vercel Sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/vercel"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(vercel.New()) }
