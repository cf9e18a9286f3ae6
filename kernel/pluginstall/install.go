package pluginstall

import (
	"context"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// SignerChangedError says a release is signed by another key than the one
// the lock file records for the plugin, and Options.AcceptNewKey does not
// name the new key.
type SignerChangedError struct {
	Name    string
	Version string
	Old     plugintrust.PublicKey
	New     plugintrust.PublicKey
}

func (e *SignerChangedError) Error() string {
	return fmt.Sprintf("%s %s is signed by key %s, but the lock file records key %s for %s; if the publisher changed keys, pass --accept-new-key %s",
		e.Name, e.Version, e.New.Fingerprint(), e.Old.Fingerprint(), e.Name, e.New)
}

// Install resolves name against constraint ("" for any version) in
// Options.Sources, verifies and unpacks the release, moves it into
// <DataDir>/plugins/<name>/<version>, records it in the lock file and
// removes older versions. On failure nothing changes.
func Install(ctx context.Context, opts Options, name, constraint string) (*Result, error) {
	opts, t, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	unlock, err := lockPlugins(ctx, opts.pluginsDir())
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", name, err)
	}
	defer unlock()
	lock, err := lockfile.Read(opts.LockFile)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", name, err)
	}
	res, err := resolve(ctx, opts.Sources, name, constraint, t, opts.seams.limits.meta)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", name, err)
	}
	r, err := installRelease(ctx, opts, t, lock, job{src: res.Source, name: name, version: res.Version.Version, index: &res.Version, constraint: constraint})
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", name, res.Version.Version, err)
	}
	return r, nil
}

// Upgrade installs the newest version of a locked plugin within the
// constraint the lock file records, from Options.Sources or else the
// lock's source. It does nothing when the locked version is the newest.
func Upgrade(ctx context.Context, opts Options, name string) (*Result, error) {
	opts, t, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	unlock, err := lockPlugins(ctx, opts.pluginsDir())
	if err != nil {
		return nil, fmt.Errorf("upgrade %s: %w", name, err)
	}
	defer unlock()
	lock, err := lockfile.Read(opts.LockFile)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s: %w", name, err)
	}
	e := lock.Entries[name]
	if e == nil {
		return nil, fmt.Errorf("upgrade %s: it is not in the lock file %s; install it first", name, lock.Path)
	}
	sources, err := sourcesFor(opts, e)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s: %w", name, err)
	}
	res, err := resolve(ctx, sources, name, e.Constraint, t, opts.seams.limits.meta)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s: %w", name, err)
	}
	if !newer(res.Version.Version, e.Version) {
		r := &Result{Name: name, Old: e.Version, New: e.Version, Fingerprint: e.Fingerprint, Source: e.Source, Unchanged: true}
		if res.Version.Version != e.Version {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the newest fitting version, %s, is older than the locked %s; kept %s",
				name, res.Version.Version, e.Version, e.Version))
		}
		return r, nil
	}
	r, err := installRelease(ctx, opts, t, lock, job{src: res.Source, name: name, version: res.Version.Version, index: &res.Version, constraint: e.Constraint})
	if err != nil {
		return nil, fmt.Errorf("upgrade %s to %s: %w", name, res.Version.Version, err)
	}
	return r, nil
}

func checkName(name string) error {
	if !plugintrust.ValidName(name) {
		return fmt.Errorf("%q is not a plugin name (lower-case letters, digits, dashes)", name)
	}
	return nil
}

// newer reports whether version a is above b.
func newer(a, b string) bool {
	va, errA := semver.StrictNewVersion(a)
	vb, errB := semver.StrictNewVersion(b)
	return errA == nil && errB == nil && va.GreaterThan(vb)
}

// sourcesFor is Options.Sources, or else the mirror the lock records.
func sourcesFor(opts Options, e *lockfile.Entry) ([]Source, error) {
	if len(opts.Sources) > 0 {
		return opts.Sources, nil
	}
	src, err := lockedSource(opts, e)
	if err != nil {
		return nil, err
	}
	return []Source{src}, nil
}

// lockedSource is the mirror a lock entry came from: the configured one
// of that name, else one made from the recorded location.
func lockedSource(opts Options, e *lockfile.Entry) (Source, error) {
	for _, s := range opts.Sources {
		if s.String() == e.Source {
			return s, nil
		}
	}
	return ParseSource(e.Source)
}

// job is one release to install.
type job struct {
	src        Source
	name       string
	version    string
	constraint string
	// index is the index entry resolution chose; nil for a locked install.
	index *IndexVersion
	// pin is the lock entry a locked install must reproduce.
	pin *lockfile.Entry
}

// installRelease verifies, stages and commits one release. The caller
// holds the install lock.
func installRelease(ctx context.Context, opts Options, t target, lock *lockfile.File, j job) (*Result, error) {
	r, err := fetchRelease(ctx, j.src, j.name, j.version, opts.ring(), opts.seams.limits.meta)
	if err != nil {
		return nil, err
	}
	if j.index != nil {
		if err := r.matchIndex(*j.index); err != nil {
			return nil, err
		}
	}
	platform, reason := t.fits(r.indexVersion())
	if reason != "" {
		return nil, fmt.Errorf("%s %s does not fit this Sparrow: %s", j.name, j.version, reason)
	}
	accepted, err := checkSigner(opts, lock.Entries[j.name], r, j.pin)
	if err != nil {
		return nil, err
	}
	st, err := stage(ctx, opts, r, platform)
	if err != nil {
		return nil, err
	}
	defer st.cleanup()
	entry := &lockfile.Entry{Name: j.name, Version: j.version, Constraint: j.constraint, Source: j.src.String(),
		Signer: r.signer.String(), Fingerprint: r.signer.Fingerprint(), Manifest: r.manifestHash(), Hashes: r.entryHashes()}
	res := &Result{Name: j.name, New: j.version, Fingerprint: r.signer.Fingerprint(), Source: j.src.String(), KeyAccepted: accepted}
	if old := lock.Entries[j.name]; old != nil {
		res.Old = old.Version
	}
	if err := ctx.Err(); err != nil { // the last point to stop
		return nil, err
	}
	if res.Warnings, err = commit(opts, lock, entry, st); err != nil {
		return nil, err
	}
	return res, nil
}

// checkSigner holds a release to the lock: a locked install must get the
// very manifest and signer the lock records; any other install may
// change the signer only to Options.AcceptNewKey. It reports whether the
// signer was newly accepted by this call.
func checkSigner(opts Options, old *lockfile.Entry, r *release, pin *lockfile.Entry) (bool, error) {
	accepted := !opts.TrustedKeys.Trusts(r.signer)
	if pin != nil {
		return accepted, matchPin(pin, r)
	}
	if old == nil || old.Signer == r.signer.String() {
		return accepted, nil
	}
	oldKey, err := plugintrust.ParsePublicKey(old.Signer)
	if err != nil {
		return false, fmt.Errorf("lock file: %s: signer: %w", old.Name, err)
	}
	if !opts.AcceptNewKey.Equal(r.signer) {
		return false, &SignerChangedError{Name: r.rel.Name, Version: r.rel.Version, Old: oldKey, New: r.signer}
	}
	return true, nil
}

// matchPin refuses a release that differs from its lock entry.
func matchPin(pin *lockfile.Entry, r *release) error {
	if got := r.manifestHash(); got != pin.Manifest {
		return fmt.Errorf("%s: the signed manifest of %s %s has SHA-256 %s, the lock file pins %s: the release changed since it was locked",
			r.src, pin.Name, pin.Version, got, pin.Manifest)
	}
	if got := r.signer.String(); got != pin.Signer {
		return fmt.Errorf("%s: %s %s is signed by %s, the lock file pins signer %s", r.src, pin.Name, pin.Version, got, pin.Signer)
	}
	hashes := r.entryHashes()
	for _, p := range sortedKeys(pin.Hashes) {
		if hashes[p] != pin.Hashes[p] {
			return fmt.Errorf("%s %s: the entry's SHA-256 on %s is %q in the signed manifest, the lock file pins %s",
				pin.Name, pin.Version, p, hashes[p], pin.Hashes[p])
		}
	}
	return nil
}

// indexVersion is how the signed manifest would appear in an index, to
// check it fits this Sparrow as resolution does.
func (r *release) indexVersion() IndexVersion {
	return IndexVersion{Version: r.rel.Version, Kind: r.rel.Kind, Protocol: r.rel.Protocol, SDK: r.rel.SDK, Platforms: r.rel.PlatformNames()}
}
