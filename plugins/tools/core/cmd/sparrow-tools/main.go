// Command sparrow-tools serves Sparrow's built-in gRPC tools from one
// process: the workspace file tools (read_file, write_file, edit_file,
// list_dir) and the shell. glob and grep are the WASM plugin search.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/tools/fs"
	"github.com/sparrow-cli/sparrow/plugins/tools/shell"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func main() { tool.Serve(append(fs.Tools(), shell.Tool{})...) }
