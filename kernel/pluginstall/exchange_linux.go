package pluginstall

import "golang.org/x/sys/unix"

// exchange swaps two paths atomically (renameat2 RENAME_EXCHANGE), so
// that a version directory being replaced is never missing.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
