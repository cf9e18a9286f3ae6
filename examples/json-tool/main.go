//go:build wasip1

// Command json-tool is a third-party Sparrow WASM tool module, built
// against the SDK alone. One module serves json_get and json_set; the
// request names the tool.
package main

import "github.com/sparrow-cli/sparrow/sdk/wasm"

func main() { wasm.RunTools(tools()) }
