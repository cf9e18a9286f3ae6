// Command socket imports a WASI socket function, which no WASM tool may.
package main

import (
	"os"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 sock_accept
func sockAccept(fd int32, flags uint32, resultFd unsafe.Pointer) uint32

func main() {
	if len(os.Args) > 1 {
		var fd int32
		os.Exit(int(sockAccept(3, 0, unsafe.Pointer(&fd))))
	}
}
