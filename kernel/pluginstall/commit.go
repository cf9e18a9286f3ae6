package pluginstall

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
)

// undoList collects the inverse of every change made so far, to run in
// reverse if a later step fails.
type undoList []func() error

func (u *undoList) add(f func() error) { *u = append(*u, f) }

// run undoes everything and returns err with any undo failure attached.
func (u undoList) run(err error) error {
	for i := len(u) - 1; i >= 0; i-- {
		if uerr := u[i](); uerr != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", uerr))
		}
	}
	return err
}

// commit moves a staged plugin into <DataDir>/plugins/<name>/<version>
// and records entry in the lock file, in that order, so the lock never
// names a directory that is not there. Until the lock file is written
// every step is undone on failure; after it, older versions and the
// staging directory are removed, and failures there are only warnings.
func commit(opts Options, lock *lockfile.File, entry *lockfile.Entry, st *staged) (warnings []string, err error) {
	var undo undoList
	defer func() {
		if err != nil {
			err = undo.run(err)
		}
	}()
	nameDir := filepath.Join(opts.pluginsDir(), entry.Name)
	if err := ensureDir(nameDir, &undo); err != nil {
		return nil, err
	}
	if err := opts.step("rename"); err != nil {
		return nil, err
	}
	final := filepath.Join(nameDir, entry.Version)
	if err := replace(st.dir, final, !opts.seams.noExchange, &undo); err != nil {
		return nil, fmt.Errorf("move %s %s into place: %w", entry.Name, entry.Version, err)
	}
	syncDir(nameDir)
	if err := opts.step("lock"); err != nil {
		return nil, err
	}
	if err := writeLock(lock, entry); err != nil {
		return nil, err
	}
	return retire(opts, entry, st), nil
}

// ensureDir makes dir if it is missing, noting how to undo that.
func ensureDir(dir string, undo *undoList) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		undo.add(func() error { return os.Remove(dir) })
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// replace renames src to dst. An existing dst is swapped with src in one
// step where the system can, so dst is never missing; the old dst ends up
// at src, inside the staging directory, and is removed with it.
func replace(src, dst string, atomic bool, undo *undoList) error {
	if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(src, dst); err != nil {
			return err
		}
		undo.add(func() error { return os.Rename(dst, src) })
		return nil
	}
	if atomic && exchange(src, dst) == nil {
		undo.add(func() error { return exchange(src, dst) })
		return nil
	}
	// No atomic exchange here (or on this file system): two renames.
	old := src + ".old"
	if err := os.Rename(dst, old); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return errors.Join(err, os.Rename(old, dst))
	}
	undo.add(func() error { return errors.Join(os.Rename(dst, src), os.Rename(old, dst)) })
	return nil
}

// writeLock records entry and writes the lock file (temp + rename, so a
// failed write leaves it as it was), unless it already says exactly that.
func writeLock(lock *lockfile.File, entry *lockfile.Entry) error {
	prev, had := lock.Entries[entry.Name]
	if had && reflect.DeepEqual(prev, entry) {
		return nil
	}
	lock.Entries[entry.Name] = entry
	if err := lock.Write(); err != nil {
		if had {
			lock.Entries[entry.Name] = prev
		} else {
			delete(lock.Entries, entry.Name)
		}
		return fmt.Errorf("update lock file: %w", err)
	}
	return nil
}

// retire removes, after the commit, every other version of the plugin,
// the staging directory and stale ones of interrupted installs.
func retire(opts Options, entry *lockfile.Entry, st *staged) []string {
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	if err := opts.step("remove"); err != nil {
		warn("%s: older versions not removed: %v", entry.Name, err)
		return warnings
	}
	nameDir := filepath.Join(opts.pluginsDir(), entry.Name)
	for _, v := range versionDirs(nameDir) {
		if v == entry.Version {
			continue
		}
		// One rename takes the version out of sight; deleting follows.
		if err := os.Rename(filepath.Join(nameDir, v), filepath.Join(st.tmp, "old-"+v)); err != nil {
			warn("%s: could not remove version %s: %v", entry.Name, v, err)
		}
	}
	syncDir(nameDir)
	if err := os.RemoveAll(st.tmp); err != nil {
		warn("could not remove %s: %v", st.tmp, err)
	}
	sweep(opts.pluginsDir())
	return warnings
}

// versionDirs lists the version directories of a plugin.
func versionDirs(nameDir string) []string {
	entries, _ := os.ReadDir(nameDir)
	var out []string
	for _, e := range entries {
		if _, err := semver.StrictNewVersion(e.Name()); err == nil && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// sweep removes staging and trash directories left by interrupted
// installs. It runs under the install lock, so none is in use.
func sweep(pluginsDir string) {
	entries, _ := os.ReadDir(pluginsDir)
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && (strings.HasPrefix(n, stagingPrefix) || strings.HasPrefix(n, trashPrefix)) {
			os.RemoveAll(filepath.Join(pluginsDir, n))
		}
	}
}

// syncDir makes renames in dir durable, best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
