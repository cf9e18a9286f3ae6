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
	exit(Handle(os.Stdin, os.Stdout, fn))
}

// RunTools is the main of a module that serves several tools: it calls
// the function of the tool the request names (argv[0] when the request
// names none) and exits like Run. A request for a tool missing from tools
// exits 1 with the names of those it serves on stderr.
//
//	func main() {
//		wasm.RunTools(map[string]wasm.Func{"glob": search.Glob, "grep": search.Grep})
//	}
func RunTools(tools map[string]Func) {
	argv0 := ""
	if len(os.Args) > 0 {
		argv0 = os.Args[0]
	}
	exit(handleTools(os.Stdin, os.Stdout, tools, argv0))
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
