//go:build !unix

package wasmtool

import (
	"os"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// platformOpenFlag adds nothing here (see osOpenFlag).
func platformOpenFlag(sys.Oflag) int { return 0 }

// renameAt is not supported here: Sparrow runs WASM tools on Unix.
func renameAt(*os.Root, string, *os.Root, string) sys.Errno { return sys.ENOSYS }

// linkAt is not supported here: Sparrow runs WASM tools on Unix.
func linkAt(*os.Root, string, *os.Root, string) sys.Errno { return sys.ENOSYS }

// futimes is not supported here: Sparrow runs WASM tools on Unix.
func futimes(*os.File, int64, int64) sys.Errno { return sys.ENOSYS }
