//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

// main explains itself when built for the wrong target: json-tool is a
// WASI module, run by Sparrow, not a program for this machine. The tools
// themselves build everywhere, so their tests run natively.
func main() {
	fmt.Fprintln(os.Stderr, "json-tool is a WASM tool module; build it with: GOOS=wasip1 GOARCH=wasm go build -o json-tool.wasm .")
	os.Exit(2)
}
