//go:build wasip1

// Command search is the WASM module of the search plugin: the glob and
// grep tools, dispatched on the tool the request names.
//
//	GOOS=wasip1 GOARCH=wasm go build -o search.wasm ./plugins/tools/search/cmd/search
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/tools/search"
	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

func main() {
	wasm.RunTools(map[string]wasm.Func{"glob": search.Glob, "grep": search.Grep})
}
