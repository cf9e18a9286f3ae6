package pluginhost

import (
	"io"
	"os"
	"path/filepath"
)

// privateCopy writes r to a read-only file in a fresh 0700 directory only
// this user can enter, for systems without sealed memory files.
func privateCopy(r io.Reader) (*verified, error) {
	dir, err := os.MkdirTemp("", "sparrow-plugin-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "plugin")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o500)
	if err == nil {
		err = copyAll(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &verified{Path: path, close: func() error { return os.RemoveAll(dir) }}, nil
}
