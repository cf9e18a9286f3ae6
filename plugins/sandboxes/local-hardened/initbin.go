package localhardened

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// initBinary is this plugin's own executable, bound into every sandbox
// as the init that confines the command from inside. The kernel runs
// plugins from sealed memory files, which cannot be bind-mounted; then
// the bytes are copied once into the state directory, named by their
// hash, so every later run reuses the copy and an upgrade makes a new one.
type initBinary struct {
	once sync.Once
	path string
	err  error
}

// get returns the init's path; dir is where a copy goes ("" for the
// system's temporary directory).
func (b *initBinary) get(dir string) (string, error) {
	b.once.Do(func() {
		exe, err := os.Executable()
		if err == nil && !strings.HasPrefix(filepath.Base(exe), "memfd:") && !strings.HasSuffix(exe, " (deleted)") {
			if _, err := os.Stat(exe); err == nil {
				b.path = exe
				return
			}
		}
		b.path, b.err = copySelf(dir)
	})
	return b.path, b.err
}

func copySelf(dir string) (string, error) {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return "", fmt.Errorf("init binary: %w", err)
	}
	if dir == "" {
		dir = os.TempDir()
	}
	sum := sha256.Sum256(self)
	path := filepath.Join(dir, "sparrow-hardened-init-"+hex.EncodeToString(sum[:8]))
	if have, err := os.ReadFile(path); err == nil && sha256.Sum256(have) == sum {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("init binary: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".init-*")
	if err != nil {
		return "", fmt.Errorf("init binary: %w", err)
	}
	_, err = io.Copy(tmp, strings.NewReader(string(self)))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o555)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("init binary: copy to %s: %w", dir, err)
	}
	return path, nil
}
