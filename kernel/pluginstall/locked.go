package pluginstall

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
)

// InstallLocked installs exactly what the lock file lists: each plugin at
// its locked version, from its recorded source (or the configured mirror
// of that name), refusing a release whose manifest hash, signer or entry
// hashes differ from the lock. Plugins already installed and intact are
// skipped. Each plugin is installed or left as it was; the error joins
// the failures.
func InstallLocked(ctx context.Context, opts Options) ([]Result, error) {
	opts, t, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	unlock, err := lockPlugins(ctx, opts.pluginsDir())
	if err != nil {
		return nil, fmt.Errorf("install locked plugins: %w", err)
	}
	defer unlock()
	lock, err := lockfile.Read(opts.LockFile)
	if err != nil {
		return nil, fmt.Errorf("install locked plugins: %w", err)
	}
	var results []Result
	var errs []error
	for _, name := range sortedKeys(lock.Entries) {
		if err := ctx.Err(); err != nil {
			return results, errors.Join(append(errs, err)...)
		}
		r, err := installLockedOne(ctx, opts, t, lock, lock.Entries[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("install %s %s from the lock file: %w", name, lock.Entries[name].Version, err))
			continue
		}
		results = append(results, *r)
	}
	return results, errors.Join(errs...)
}

func installLockedOne(ctx context.Context, opts Options, t target, lock *lockfile.File, e *lockfile.Entry) (*Result, error) {
	if checkPlugin(opts, t, e).OK() {
		return &Result{Name: e.Name, Old: e.Version, New: e.Version, Fingerprint: e.Fingerprint, Source: e.Source, Unchanged: true}, nil
	}
	src, err := lockedSource(opts, e)
	if err != nil {
		return nil, err
	}
	return installRelease(ctx, opts, t, lock, job{src: src, name: e.Name, version: e.Version, constraint: e.Constraint, pin: e})
}
