// Command sparrow-tools-shell serves the shell tool.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/tools/shell"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func main() { tool.Serve(shell.Tool{}) }
