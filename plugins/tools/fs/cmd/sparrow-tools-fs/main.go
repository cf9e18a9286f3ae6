// Command sparrow-tools-fs serves the workspace file tools.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/tools/fs"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func main() { tool.Serve(fs.Tools()...) }
