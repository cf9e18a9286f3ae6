//go:build !unix

package wasmtool

import (
	"os"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// osOpenFlag converts the flags of sys.FS.OpenFile that are passed on to
// the open itself (see platform_unix.go).
func osOpenFlag(flag sys.Oflag) int {
	var f int
	switch flag & accessMode {
	case sys.O_RDWR:
		f = os.O_RDWR
	case sys.O_WRONLY:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	if flag&sys.O_APPEND != 0 {
		f |= os.O_APPEND
	}
	if flag&sys.O_SYNC != 0 {
		f |= os.O_SYNC
	}
	return f
}

// renameAt is not supported here: Sparrow runs WASM tools on Unix.
func renameAt(*os.Root, string, *os.Root, string) sys.Errno { return sys.ENOSYS }

// linkAt is not supported here: Sparrow runs WASM tools on Unix.
func linkAt(*os.Root, string, *os.Root, string) sys.Errno { return sys.ENOSYS }

// futimes is not supported here: Sparrow runs WASM tools on Unix.
func futimes(*os.File, int64, int64) sys.Errno { return sys.ENOSYS }
