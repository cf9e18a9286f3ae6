// Command sparrow-tools serves Sparrow's built-in tools from one process:
// the workspace file tools and the shell.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/tools/fs"
	"github.com/sparrow-cli/sparrow/plugins/tools/shell"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func main() { tool.Serve(append(fs.Tools(), shell.Tool{})...) }
