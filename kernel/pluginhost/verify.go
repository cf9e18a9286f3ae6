package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	goplugin "github.com/hashicorp/go-plugin"
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

// verifyEntry copies path into sealed storage, hashing as it goes, checks
// the copy against want (when set) with go-plugin's SecureConfig, and
// returns the copy to exec.
func verifyEntry(path, want, pinnedBy string) (*verified, error) {
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
	v.SHA256 = hex.EncodeToString(h.Sum(nil))
	if want == "" {
		return v, nil
	}
	sum, err := hex.DecodeString(want)
	if err != nil {
		_ = v.Close()
		return nil, fmt.Errorf("pinned hash %q is not hex: %w", want, err)
	}
	// Check the copy, not the original: these are the bytes that will run.
	sc := &goplugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	ok, err := sc.Check(v.Path)
	if err != nil {
		_ = v.Close()
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	if !ok {
		_ = v.Close()
		return nil, &HashMismatchError{Path: path, Want: want, Got: v.SHA256, PinnedBy: pinnedBy}
	}
	return v, nil
}
