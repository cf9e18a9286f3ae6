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

// Mismatch is one way an installed plugin differs from what was verified
// when it was installed.
type Mismatch struct {
	Plugin string
	// File is relative to the plugin's directory, "" for the plugin as a
	// whole.
	File     string
	Problem  string
	Expected string
	Actual   string
}

func (m Mismatch) String() string {
	where := m.Plugin
	if m.File != "" {
		where += ": " + m.File
	}
	return fmt.Sprintf("%s: %s (expected %s, got %s)", where, m.Problem, m.Expected, m.Actual)
}

// Report is the state of one plugin: locked, installed, or both.
type Report struct {
	Name    string
	Version string
	Dir     string
	// Mismatches lists every problem found; none means intact.
	Mismatches []Mismatch
}

// OK reports whether the plugin is intact.
func (r Report) OK() bool { return len(r.Mismatches) == 0 }

func (r *Report) add(file, problem, expected, actual string) {
	r.Mismatches = append(r.Mismatches, Mismatch{Plugin: r.Name, File: file, Problem: problem, Expected: expected, Actual: actual})
}

// Verify checks every plugin of the lock file as installed: each file
// against the saved signed manifest, that manifest's signature against
// the trusted keys and the lock's signer, and the entry against the
// lock's hash for this platform. Installed versions the lock does not
// pin are reported too. A caller exits non-zero if any report is not OK.
func Verify(ctx context.Context, opts Options) ([]Report, error) {
	opts, t, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(opts.pluginsDir()); err == nil {
		unlock, err := lockPlugins(ctx, opts.pluginsDir())
		if err != nil {
			return nil, fmt.Errorf("verify plugins: %w", err)
		}
		defer unlock()
	}
	lock, err := lockfile.Read(opts.LockFile)
	if err != nil {
		return nil, fmt.Errorf("verify plugins: %w", err)
	}
	var reports []Report
	for _, name := range sortedKeys(lock.Entries) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		reports = append(reports, checkPlugin(opts, t, lock.Entries[name]))
	}
	return append(reports, unlocked(opts, lock)...), nil
}

// checkPlugin checks one locked plugin as installed.
func checkPlugin(opts Options, t target, e *lockfile.Entry) Report {
	dir := filepath.Join(opts.pluginsDir(), e.Name, e.Version)
	rep := Report{Name: e.Name, Version: e.Version, Dir: dir}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		rep.add("", "not installed", "version "+e.Version+" in "+dir, "nothing there")
		return rep
	}
	rel := checkRelease(opts, e, dir, &rep)
	if rel == nil {
		return rep
	}
	platform := t.platform
	if rel.Platforms[platform] == nil && rel.Platforms[plugintrust.PlatformWASM] != nil {
		platform = plugintrust.PlatformWASM
	}
	p := rel.Platforms[platform]
	if p == nil {
		rep.add(ReleaseFile, "no build for this platform", platform, fmt.Sprint(rel.PlatformNames()))
		return rep
	}
	checkTree(dir, p.Files, &rep)
	if want := e.Hashes[platform]; want != p.Files[rel.Entry] {
		rep.add(rel.Entry, "entry hash differs from the lock file's for "+platform, orNone(want), p.Files[rel.Entry])
	}
	return rep
}

// checkRelease checks the saved manifest and signature against the lock
// entry and returns the manifest, nil when it cannot be read.
func checkRelease(opts Options, e *lockfile.Entry, dir string, rep *Report) *plugintrust.Release {
	path := filepath.Join(dir, ReleaseFile)
	data, err := os.ReadFile(path)
	if err != nil {
		rep.add(ReleaseFile, "signed manifest unreadable", "SHA-256 "+e.Manifest, err.Error())
		return nil
	}
	if got := plugintrust.HashBytes(data); got != e.Manifest {
		rep.add(ReleaseFile, "signed manifest differs from the lock file's", e.Manifest, got)
	}
	sig, err := os.ReadFile(filepath.Join(dir, ReleaseSigFile))
	if err == nil {
		var key plugintrust.PublicKey
		key, err = plugintrust.Verify(opts.ring(), path, data, sig)
		var untrusted *plugintrust.UntrustedKeyError
		if errors.As(err, &untrusted) {
			rep.add(ReleaseSigFile, "signer not trusted", "a key in policy.trusted_keys", key.Fingerprint())
			err = nil
		}
		if err == nil && key.String() != e.Signer {
			rep.add(ReleaseSigFile, "signer differs from the lock file's", e.Fingerprint, key.Fingerprint())
		}
	}
	if err != nil {
		rep.add(ReleaseSigFile, "bad signature", "a signature by "+e.Fingerprint, err.Error())
	}
	rel, err := plugintrust.ParseRelease(path, data)
	if err != nil {
		rep.add(ReleaseFile, "signed manifest unreadable", "a release manifest", err.Error())
		return nil
	}
	if rel.Name != e.Name || rel.Version != e.Version {
		rep.add(ReleaseFile, "signed manifest is for another release", e.Name+" "+e.Version, rel.Name+" "+rel.Version)
	}
	return rel
}

// checkTree hashes every file under dir against want, reporting changed,
// extra, missing and non-regular files.
func checkTree(dir string, want map[string]string, rep *Report) {
	seen := map[string]bool{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch {
		case err != nil:
			rep.add(rel, "unreadable", "a readable file", err.Error())
			return nil
		case rel == "." || d.IsDir():
			return nil
		case rel == ReleaseFile || rel == ReleaseSigFile:
			return nil
		case !d.Type().IsRegular():
			rep.add(rel, "not a regular file", "a regular file", d.Type().String())
			seen[rel] = true
			return nil
		}
		seen[rel] = true
		got, herr := plugintrust.HashFile(path)
		switch w, listed := want[rel]; {
		case herr != nil:
			rep.add(rel, "unreadable", orNone(w), herr.Error())
		case !listed:
			rep.add(rel, "not in the signed manifest", "no such file", got)
		case got != w:
			rep.add(rel, "modified", w, got)
		}
		return nil
	})
	for _, f := range sortedKeys(want) {
		if !seen[f] {
			rep.add(f, "missing", want[f], "no such file")
		}
	}
}

// unlocked reports installed version directories the lock does not pin.
func unlocked(opts Options, lock *lockfile.File) []Report {
	var reports []Report
	for _, inst := range scanInstalled(opts.pluginsDir()) {
		e := lock.Entries[inst.Name]
		if e != nil && e.Version == inst.Version {
			continue
		}
		rep := Report{Name: inst.Name, Version: inst.Version, Dir: inst.Dir}
		want := "not in the lock file"
		if e != nil {
			want = "only version " + e.Version + ", which the lock file pins"
		}
		rep.add("", "installed but not locked", want, "version "+inst.Version+" in "+inst.Dir)
		reports = append(reports, rep)
	}
	return reports
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
