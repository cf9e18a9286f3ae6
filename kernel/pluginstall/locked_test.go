package pluginstall

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// installTwo publishes and installs two plugins.
func installTwo(t *testing.T) (*mirror, *env) {
	m := newMirror(t)
	m.publish(relSpec{name: "alpha-tool", version: "1.0.0"})
	m.publish(relSpec{name: "beta-tool", version: "0.3.0", extra: map[string]string{"lib/data.txt": "data\n"}})
	e := newEnv(t, m.source(), m.key.Public())
	e.install("alpha-tool", "")
	e.install("beta-tool", "~0.3")
	return m, e
}

func TestInstallLockedReproducesTheLock(t *testing.T) {
	m, e := installTwo(t)
	want := e.snapshot()
	// A newer version appears; the lock still pins 1.0.0.
	m.publish(relSpec{name: "alpha-tool", version: "1.1.0"})
	if err := os.RemoveAll(filepath.Join(e.data, "plugins")); err != nil {
		t.Fatal(err)
	}
	e.opts.Sources = nil // from the sources the lock records
	results, err := InstallLocked(t.Context(), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].New != "1.0.0" || results[1].New != "0.3.0" || results[0].Unchanged || results[1].Unchanged {
		t.Errorf("results %+v, want alpha-tool 1.0.0 and beta-tool 0.3.0 installed", results)
	}
	e.assertUnchanged(want)

	results, err = InstallLocked(t.Context(), e.opts)
	if err != nil || !results[0].Unchanged || !results[1].Unchanged {
		t.Errorf("second run: %+v, %v; want both unchanged", results, err)
	}
	e.assertUnchanged(want)
}

func TestInstallLockedRepairsAModifiedPlugin(t *testing.T) {
	_, e := installTwo(t)
	want := e.snapshot()
	entry := filepath.Join(e.data, "plugins", "beta-tool", "0.3.0", "beta-tool")
	if err := os.WriteFile(entry, []byte("#!/bin/sh\nevil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	results, err := InstallLocked(t.Context(), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	if !results[0].Unchanged || results[1].Unchanged {
		t.Errorf("results %+v: want alpha-tool skipped, beta-tool reinstalled", results)
	}
	e.assertUnchanged(want)
}

func TestInstallLockedRefusesAChangedRelease(t *testing.T) {
	m, e := installTwo(t)
	// The publisher re-signs a different 0.3.0 under the same version.
	m.publish(relSpec{name: "beta-tool", version: "0.3.0", extra: map[string]string{"lib/data.txt": "other\n"}})
	os.RemoveAll(filepath.Join(e.data, "plugins", "beta-tool"))
	before := e.snapshot()
	lock, _ := lockfile.Read(e.lock)
	_, err := InstallLocked(t.Context(), e.opts)
	wantErr(t, err, "install beta-tool 0.3.0 from the lock file", "the release changed since it was locked", lock.Entries["beta-tool"].Manifest)
	e.assertUnchanged(before)
}

func TestInstallLockedRefusesAnotherSigner(t *testing.T) {
	m, e := installTwo(t)
	other := newKey(t)
	e.opts.TrustedKeys = append(e.opts.TrustedKeys, other.Public())
	e.opts.AcceptNewKey = other.Public() // does not override a lock pin
	lock, _ := lockfile.Read(e.lock)
	// Same manifest bytes, other signature: only the signer differs.
	for _, f := range []string{"alpha-tool_1.0.0_manifest.json", "alpha-tool_1.0.0_SHA256SUMS"} {
		p := versionPath("alpha-tool", "1.0.0", f)
		m.write(p+".sig", plugintrust.Sign(other, m.read(p)))
	}
	os.RemoveAll(filepath.Join(e.data, "plugins", "alpha-tool"))
	before := e.snapshot()
	_, err := InstallLocked(t.Context(), e.opts)
	wantErr(t, err, "the lock file pins signer "+lock.Entries["alpha-tool"].Signer)
	e.assertUnchanged(before)
}

func TestUpgrade(t *testing.T) {
	m, e := installTwo(t)
	r, err := Upgrade(t.Context(), e.opts, "beta-tool")
	if err != nil || !r.Unchanged || r.Old != "0.3.0" || r.New != "0.3.0" {
		t.Fatalf("upgrade with nothing newer: %+v, %v", r, err)
	}
	m.publish(relSpec{name: "beta-tool", version: "0.3.1"})
	m.publish(relSpec{name: "beta-tool", version: "0.4.0"}) // outside ~0.3
	r, err = Upgrade(t.Context(), e.opts, "beta-tool")
	if err != nil || r.Unchanged || r.Old != "0.3.0" || r.New != "0.3.1" {
		t.Fatalf("upgrade: %+v, %v; want 0.3.0 → 0.3.1", r, err)
	}
	lock, _ := lockfile.Read(e.lock)
	if got := lock.Entries["beta-tool"]; got.Version != "0.3.1" || got.Constraint != "~0.3" {
		t.Errorf("lock entry %+v: want 0.3.1 within ~0.3", got)
	}
	e.assertIntact()

	_, err = Upgrade(t.Context(), e.opts, "gamma-tool")
	wantErr(t, err, "upgrade gamma-tool: it is not in the lock file")
}

func TestRemove(t *testing.T) {
	_, e := installTwo(t)
	before := e.snapshot()
	for _, step := range []string{"lock", "rename"} {
		e.opts.seams.step = failAt(step)
		_, err := Remove(t.Context(), e.opts, "alpha-tool")
		wantErr(t, err, "remove alpha-tool: injected failure at "+step)
		e.assertUnchanged(before)
	}
	e.opts.seams.step = nil
	r, err := Remove(t.Context(), e.opts, "alpha-tool")
	if err != nil || r.Old != "1.0.0" || r.New != "" {
		t.Fatalf("remove: %+v, %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(e.data, "plugins", "alpha-tool")); !os.IsNotExist(err) {
		t.Errorf("alpha-tool still installed: %v", err)
	}
	lock, _ := lockfile.Read(e.lock)
	if got := sortedKeys(lock.Entries); !cmp.Equal(got, []string{"beta-tool"}) {
		t.Errorf("locked %v, want only beta-tool", got)
	}
	_, err = Remove(t.Context(), e.opts, "alpha-tool")
	wantErr(t, err, "remove alpha-tool: not installed")
	e.assertIntact()
}

// A directory the lock does not list (left by a crash between the lock
// write and the removal) is removed too.
func TestRemoveOrphanDirectory(t *testing.T) {
	_, e := installTwo(t)
	lock, _ := lockfile.Read(e.lock)
	delete(lock.Entries, "alpha-tool")
	if err := lock.Write(); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(t.Context(), e.opts, "alpha-tool"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.data, "plugins", "alpha-tool")); !os.IsNotExist(err) {
		t.Errorf("alpha-tool still there: %v", err)
	}
}

func TestVerify(t *testing.T) {
	_, e := installTwo(t)
	dir := filepath.Join(e.data, "plugins", "beta-tool", "0.3.0")
	entryHash := hashOf(t, filepath.Join(dir, "beta-tool"))
	dataHash := hashOf(t, filepath.Join(dir, "lib", "data.txt"))
	os.WriteFile(filepath.Join(dir, "beta-tool"), []byte("#!/bin/sh\nevil\n"), 0o755)
	os.Remove(filepath.Join(dir, "lib", "data.txt"))
	os.WriteFile(filepath.Join(dir, "lib", "extra.so"), []byte("x"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd"))
	lock, _ := lockfile.Read(e.lock)
	lock.Entries["alpha-tool"].Hashes[testPlatform] = strings.Repeat("0", 64)
	lock.Write()
	os.MkdirAll(filepath.Join(e.data, "plugins", "gamma-tool", "2.0.0"), 0o755)

	reports, err := Verify(t.Context(), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []Mismatch
	for _, r := range reports {
		got = append(got, r.Mismatches...)
	}
	alphaEntry := lock.Entries["alpha-tool"]
	want := []Mismatch{
		{Plugin: "alpha-tool", File: "alpha-tool", Problem: "entry hash differs from the lock file's for " + testPlatform,
			Expected: strings.Repeat("0", 64), Actual: hashOf(t, filepath.Join(e.data, "plugins", "alpha-tool", alphaEntry.Version, "alpha-tool"))},
		{Plugin: "beta-tool", File: "beta-tool", Problem: "modified", Expected: entryHash, Actual: hashOfBytes("#!/bin/sh\nevil\n")},
		{Plugin: "beta-tool", File: "lib/extra.so", Problem: "not in the signed manifest", Expected: "no such file", Actual: hashOfBytes("x")},
		{Plugin: "beta-tool", File: "passwd", Problem: "not a regular file", Expected: "a regular file", Actual: "L---------"},
		{Plugin: "beta-tool", File: "lib/data.txt", Problem: "missing", Expected: dataHash, Actual: "no such file"},
		{Plugin: "gamma-tool", Problem: "installed but not locked", Expected: "not in the lock file",
			Actual: "version 2.0.0 in " + filepath.Join(e.data, "plugins", "gamma-tool", "2.0.0")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}

	// The saved release altered, and a verifier that trusts nobody.
	saved := filepath.Join(dir, ReleaseFile)
	data, _ := os.ReadFile(saved)
	os.WriteFile(saved, bytes.Replace(data, []byte(`"network": false`), []byte(`"network": true`), 1), 0o644)
	e.opts.TrustedKeys = nil
	reports, _ = Verify(t.Context(), e.opts)
	problems := map[string]bool{}
	for _, r := range reports {
		for _, mm := range r.Mismatches {
			problems[mm.Plugin+": "+mm.Problem] = true
		}
	}
	for _, p := range []string{"alpha-tool: signer not trusted", "beta-tool: signed manifest differs from the lock file's", "beta-tool: bad signature"} {
		if !problems[p] {
			t.Errorf("no %q in %v", p, problems)
		}
	}
}

func TestInstalled(t *testing.T) {
	m, e := installTwo(t)
	os.RemoveAll(filepath.Join(e.data, "plugins", "beta-tool"))
	os.MkdirAll(filepath.Join(e.data, "plugins", "gamma-tool", "2.0.0"), 0o755)
	got, err := Installed(e.data, e.lock)
	if err != nil {
		t.Fatal(err)
	}
	fp, src := m.key.Public().Fingerprint(), m.source().String()
	want := []Installation{
		{Name: "alpha-tool", Version: "1.0.0", Locked: "1.0.0", Kind: "tool", Source: src, Fingerprint: fp, Dir: filepath.Join(e.data, "plugins", "alpha-tool", "1.0.0")},
		{Name: "beta-tool", Locked: "0.3.0", Source: src, Fingerprint: fp},
		{Name: "gamma-tool", Version: "2.0.0", Dir: filepath.Join(e.data, "plugins", "gamma-tool", "2.0.0")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("installed (-want +got):\n%s", diff)
	}
}

func hashOf(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return hashOfBytes(string(data))
}

func hashOfBytes(s string) string { return plugintrust.HashBytes([]byte(s)) }
