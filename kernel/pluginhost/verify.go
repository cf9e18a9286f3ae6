package pluginhost

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// verified is a plugin executable copied to a place nobody else can change,
// whose bytes matched the expected hash.
type verified struct {
	// Path execs the verified bytes.
	Path string
	// SHA256 is the hex hash of those bytes.
	SHA256 string
	// File is the sealed memory file, nil for a private copy; a confined
	// plugin inherits it and execs it from inside its sandbox.
	File  *os.File
	close func() error
}

func (v *verified) Close() error { return v.close() }

// HashMismatchError reports an executable whose bytes differ from the hash
// the plugin was pinned to.
type HashMismatchError struct {
	Path     string
	Want     string
	Got      string
	PinnedBy string
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("%s has sha256 %s, but %s pins %s; refusing to run it (reinstall the plugin or update the pin)",
		e.Path, e.Got, e.PinnedBy, e.Want)
}

// verifyEntry copies path into sealed storage, hashing the bytes as they
// are written, checks that hash against want (when set), and returns the
// copy to exec. The hash is of exactly the bytes in the copy, which
// nobody can change once sealed, so the copy is not read back.
func verifyEntry(path, want, pinnedBy string) (*verified, error) {
	var sum []byte
	if want != "" {
		var err error
		if sum, err = hex.DecodeString(want); err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("pinned hash %q is not a hex SHA-256", want)
		}
	}
	src, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	h := sha256.New()
	v, err := sealedCopy(io.TeeReader(src, h))
	if err != nil {
		return nil, fmt.Errorf("copy %s to sealed storage: %w", path, err)
	}
	got := h.Sum(nil)
	v.SHA256 = hex.EncodeToString(got)
	if sum != nil && subtle.ConstantTimeCompare(got, sum) != 1 {
		_ = v.Close()
		return nil, &HashMismatchError{Path: path, Want: want, Got: v.SHA256, PinnedBy: pinnedBy}
	}
	return v, nil
}

// copyBuffer is what sealedCopy moves at a time: plugin executables are
// tens of MB, and each read and write is a system call.
const copyBuffer = 1 << 20

// copyAll copies r to w through a copyBuffer-sized buffer (io.Copy would
// let an *os.File pick its own 32 KiB one).
func copyAll(w io.Writer, r io.Reader) error {
	_, err := io.CopyBuffer(struct{ io.Writer }{w}, r, make([]byte, copyBuffer))
	return err
}
