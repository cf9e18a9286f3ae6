package pluginstall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Remove deletes a plugin: its lock entry and every installed version.
//
// The lock file is written first and the directory removed after: a crash
// in between leaves an installed directory the lock does not list (inert
// under policy.locked, reported by Verify, cleared by the next Remove or
// Install), never a lock entry naming a directory that is gone. The
// directory leaves in one rename into a trash directory; if that rename
// fails, the lock file is put back byte-for-byte.
func Remove(ctx context.Context, opts Options, name string) (*Result, error) {
	opts, _, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("remove: %w", err)
	}
	unlock, err := lockPlugins(ctx, opts.pluginsDir())
	if err != nil {
		return nil, fmt.Errorf("remove %s: %w", name, err)
	}
	defer unlock()
	r, err := remove(opts, name)
	if err != nil {
		return nil, fmt.Errorf("remove %s: %w", name, err)
	}
	return r, nil
}

func remove(opts Options, name string) (*Result, error) {
	lock, err := lockfile.Read(opts.LockFile)
	if err != nil {
		return nil, err
	}
	e := lock.Entries[name]
	nameDir := filepath.Join(opts.pluginsDir(), name)
	_, statErr := os.Lstat(nameDir)
	installed := !errors.Is(statErr, fs.ErrNotExist)
	if e == nil && !installed {
		return nil, fmt.Errorf("not installed (not in the lock file %s, no %s)", opts.LockFile, nameDir)
	}
	res := &Result{Name: name}
	if e != nil {
		res.Old, res.Source, res.Fingerprint = e.Version, e.Source, e.Fingerprint
	}
	var trash string
	if installed {
		if trash, err = os.MkdirTemp(opts.pluginsDir(), trashPrefix); err != nil {
			return nil, err
		}
		defer func() {
			if err := os.RemoveAll(trash); err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("could not remove %s: %v", trash, err))
			}
		}()
	}
	restore, err := dropLockEntry(opts, lock, name)
	if err != nil || !installed {
		return res, err
	}
	if err := opts.step("rename"); err != nil {
		return nil, restore(err)
	}
	if err := os.Rename(nameDir, filepath.Join(trash, "old")); err != nil {
		return nil, restore(err)
	}
	syncDir(opts.pluginsDir())
	return res, nil
}

// dropLockEntry writes the lock file without name, and returns how to put
// the file back as it was.
func dropLockEntry(opts Options, lock *lockfile.File, name string) (restore func(error) error, err error) {
	noop := func(err error) error { return err }
	if lock.Entries[name] == nil {
		return noop, nil
	}
	orig, err := os.ReadFile(lock.Path)
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	fi, err := os.Stat(lock.Path)
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	if err := opts.step("lock"); err != nil {
		return nil, err
	}
	delete(lock.Entries, name)
	if err := lock.Write(); err != nil {
		return nil, fmt.Errorf("update lock file: %w", err)
	}
	return func(err error) error {
		if rerr := plugintrust.WriteFileAtomic(lock.Path, orig, fi.Mode().Perm()); rerr != nil {
			return errors.Join(err, fmt.Errorf("put the lock file back: %w", rerr))
		}
		return err
	}, nil
}
