// Command hostimport imports a host function outside WASI.
package main

import "os"

//go:wasmimport env open_socket
func openSocket() uint32

func main() {
	if len(os.Args) > 1 {
		os.Exit(int(openSocket()))
	}
}
