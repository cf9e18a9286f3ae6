//go:build wasip1

package wasm

import (
	"fmt"
	"os"
)

// Run is a WASM tool's whole main: it reads the request on stdin, calls
// fn, writes the result on stdout and exits. A protocol failure is logged
// on stderr and exits 1; a failure of fn is a normal result and exits 0.
//
//	func main() {
//		wasm.Run(func(req wasm.Request) (string, error) { return "hello", nil })
//	}
func Run(fn Func) {
	if err := Handle(os.Stdin, os.Stdout, fn); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
