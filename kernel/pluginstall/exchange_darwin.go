package pluginstall

import "golang.org/x/sys/unix"

// exchange swaps two paths atomically (renamex_np RENAME_SWAP), so that
// a version directory being replaced is never missing.
func exchange(a, b string) error { return unix.RenamexNp(a, b, unix.RENAME_SWAP) }
