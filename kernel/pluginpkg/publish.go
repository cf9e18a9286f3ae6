package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// publishDir makes dir hold exactly files: they are written and synced in
// a temporary directory beside it, which is then renamed into place. An
// existing dir is moved aside first and removed after; if the second
// rename fails it is moved back.
func publishDir(dir string, files map[string][]byte) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("publish %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("publish %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // gone already when the rename succeeded
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("publish %s: %w", dir, err)
	}
	for _, n := range sortedKeys(files) {
		if err := writeSynced(filepath.Join(tmp, n), files[n]); err != nil {
			return fmt.Errorf("publish %s: %w", dir, err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("publish %s: %w", dir, err)
	}
	old := tmp + ".old"
	_, statErr := os.Lstat(dir)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return fmt.Errorf("publish %s: %w", dir, statErr)
	}
	if exists {
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("publish %s: move the old version aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if exists {
			if back := os.Rename(old, dir); back != nil {
				return fmt.Errorf("publish %s: %w; the old version is left in %s (%v)", dir, err, old, back)
			}
		}
		return fmt.Errorf("publish %s: %w", dir, err)
	}
	if exists {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("publish %s: remove the old version: %w", dir, err)
		}
	}
	return syncDir(parent)
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename inside dir durable. Platforms that cannot sync a
// directory are not an error.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
