package pluginstall

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

func TestInstall(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	rel := m.publish(relSpec{name: "hello-tool", version: "0.2.0",
		caps: plugintrust.Capabilities{Env: []string{"PATH", "HOME"}}, extra: map[string]string{"lib/data.txt": "data\n"}})
	mux := http.NewServeMux()
	mux.Handle("/sparrow/", http.StripPrefix("/sparrow", http.FileServer(http.Dir(m.dir))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	httpSrc, err := ParseSource(srv.URL + "/sparrow/")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  Source
	}{
		{"dir", m.source()},
		{"http", httpSrc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.src, m.key.Public())
			got := e.install("hello-tool", "")
			want := &Result{Name: "hello-tool", New: "0.2.0", Fingerprint: m.key.Public().Fingerprint(), Source: tc.src.String()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			checkInstalled(t, e, m, rel, tc.src)
		})
	}
}

// checkInstalled checks the plugin directory, its modes, the saved
// release, the lock entry, and that discovery finds it and nothing else.
func checkInstalled(t *testing.T, e *env, m *mirror, rel *plugintrust.Release, src Source) {
	t.Helper()
	dir := filepath.Join(e.data, "plugins", rel.Name, rel.Version)
	for file, want := range rel.Platforms[testPlatform].Files {
		path := filepath.Join(dir, filepath.FromSlash(file))
		if got, err := plugintrust.HashFile(path); err != nil || got != want {
			t.Errorf("%s: hash %s, %v; want %s", file, got, err, want)
		}
		fi, _ := os.Stat(path)
		wantMode := os.FileMode(0o644)
		if file == rel.Entry {
			wantMode = 0o755
		}
		if fi.Mode().Perm() != wantMode {
			t.Errorf("%s: mode %v, want %v", file, fi.Mode().Perm(), wantMode)
		}
	}
	manifest := m.read(versionPath(rel.Name, rel.Version, plugintrust.ManifestName(rel.Name, rel.Version)))
	saved, _ := os.ReadFile(filepath.Join(dir, ReleaseFile))
	sig, _ := os.ReadFile(filepath.Join(dir, ReleaseSigFile))
	if !cmp.Equal(saved, manifest) || !cmp.Equal(sig, m.read(versionPath(rel.Name, rel.Version, plugintrust.ManifestName(rel.Name, rel.Version)+".sig"))) {
		t.Errorf("saved release differs from the signed manifest and signature")
	}
	lock, err := lockfile.Read(e.lock)
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for p, pl := range rel.Platforms {
		hashes[p] = pl.Files[rel.Entry]
	}
	want := &lockfile.Entry{Name: rel.Name, Version: rel.Version, Source: src.String(), Signer: m.key.Public().String(),
		Fingerprint: m.key.Public().Fingerprint(), Manifest: plugintrust.HashBytes(manifest), Hashes: hashes}
	if diff := cmp.Diff(want, lock.Entries[rel.Name]); diff != "" {
		t.Errorf("lock entry (-want +got):\n%s", diff)
	}
	found, diags := pluginhost.Discover([]string{filepath.Join(e.data, "plugins")})
	if diags.HasErrors() || len(found) != 1 || found[0].Name != rel.Name || found[0].Version.Original() != rel.Version {
		t.Errorf("discover: %v, %v; want only %s %s", found, diags, rel.Name, rel.Version)
	}
	entries, _ := os.ReadDir(filepath.Join(e.data, "plugins"))
	for _, d := range entries {
		if d.Name() != lockName && d.Name() != rel.Name {
			t.Errorf("left behind in plugins: %s", d.Name())
		}
	}
	e.assertIntact()
}

func TestInstallReplacesOlderVersion(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	e := newEnv(t, m.source(), m.key.Public())
	e.install("hello-tool", "")
	rel := m.publish(relSpec{name: "hello-tool", version: "0.2.0"})
	got := e.install("hello-tool", "")
	if got.Old != "0.1.0" || got.New != "0.2.0" {
		t.Errorf("result %+v, want 0.1.0 → 0.2.0", got)
	}
	if _, err := os.Stat(filepath.Join(e.data, "plugins", "hello-tool", "0.1.0")); !os.IsNotExist(err) {
		t.Errorf("0.1.0 still installed: %v", err)
	}
	checkInstalled(t, e, m, rel, m.source())
}

func TestReinstallSameVersionSwapsIt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		noExchange bool
	}{{"atomic exchange", false}, {"two renames", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirror(t)
			m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
			e := newEnv(t, m.source(), m.key.Public())
			e.install("hello-tool", "")
			// The publisher rebuilt 0.1.0 with another file.
			rel := m.publish(relSpec{name: "hello-tool", version: "0.1.0", extra: map[string]string{"NOTES": "rebuilt\n"}})
			e.opts.seams.noExchange = tc.noExchange
			before := e.snapshot()
			e.opts.seams.step = failAt("lock")
			_, err := Install(t.Context(), e.opts, "hello-tool", "")
			wantErr(t, err, "injected failure at lock")
			e.assertUnchanged(before)
			e.assertIntact()

			e.opts.seams.step = nil
			e.install("hello-tool", "")
			checkInstalled(t, e, m, rel, m.source())
		})
	}
}

// Discovery running during an install sees the old version until the
// new one is renamed into place, and never a staging directory.
func TestDiscoveryDuringInstall(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	e := newEnv(t, m.source(), m.key.Public())
	e.install("hello-tool", "")
	m.publish(relSpec{name: "hello-tool", version: "0.2.0"})
	want := map[string]string{"rename": "0.1.0", "lock": "0.2.0", "remove": "0.2.0"}
	e.opts.seams.step = func(step string) error {
		found, diags := pluginhost.Discover([]string{filepath.Join(e.data, "plugins")})
		if diags.HasErrors() || len(found) != 1 || found[0].Version.Original() != want[step] {
			t.Errorf("at %s: discovered %v, %v; want hello-tool %s only", step, found, diags, want[step])
		}
		return nil
	}
	e.install("hello-tool", "")
}

func TestFailedFirstInstallLeavesNoDirectory(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "alpha-tool", version: "1.0.0"})
	m.publish(relSpec{name: "beta-tool", version: "1.0.0"})
	e := newEnv(t, m.source(), m.key.Public())
	e.install("alpha-tool", "")
	before := e.snapshot()
	for _, step := range []string{"rename", "lock"} {
		e.opts.seams.step = failAt(step)
		_, err := Install(t.Context(), e.opts, "beta-tool", "")
		wantErr(t, err, "install beta-tool 1.0.0: injected failure at "+step)
		e.assertUnchanged(before)
	}
	ctx, cancel := context.WithCancel(t.Context())
	e.opts.seams.step = nil
	e.opts.seams.wrapWriter = func(file string, w io.Writer) io.Writer {
		if file == ReleaseSigFile {
			cancel() // cancelled once everything is staged
		}
		return w
	}
	_, err := Install(ctx, e.opts, "beta-tool", "")
	wantErr(t, err, "context canceled")
	e.assertUnchanged(before)
}

func failAt(step string) func(string) error {
	return func(s string) error {
		if s == step {
			return errors.New("injected failure at " + s)
		}
		return nil
	}
}

func TestSignerChange(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	newSigner := newKey(t)
	e := newEnv(t, m.source(), m.key.Public(), newSigner.Public())
	e.install("hello-tool", "")
	m.publish(relSpec{name: "hello-tool", version: "0.2.0", signer: &newSigner})
	before := e.snapshot()

	_, err := Install(t.Context(), e.opts, "hello-tool", "")
	var changed *SignerChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("error %v, want a SignerChangedError", err)
	}
	wantErr(t, err, m.key.Public().Fingerprint(), newSigner.Public().Fingerprint(), "--accept-new-key")
	e.assertUnchanged(before)

	e.opts.AcceptNewKey = newKey(t).Public() // some other key
	_, err = Install(t.Context(), e.opts, "hello-tool", "")
	wantErr(t, err, "lock file records key "+m.key.Public().Fingerprint())
	e.assertUnchanged(before)

	e.opts.AcceptNewKey = newSigner.Public()
	got := e.install("hello-tool", "")
	if !got.KeyAccepted || got.Fingerprint != newSigner.Public().Fingerprint() || got.New != "0.2.0" {
		t.Errorf("result %+v, want 0.2.0 by the new key, accepted", got)
	}
	lock, _ := lockfile.Read(e.lock)
	if lock.Entries["hello-tool"].Signer != newSigner.Public().String() {
		t.Errorf("lock signer %s, want the new key", lock.Entries["hello-tool"].Signer)
	}
}

func TestTrustKeyForOneInstall(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	e := newEnv(t, m.source()) // trusts nobody
	_, err := Install(t.Context(), e.opts, "hello-tool", "")
	wantErr(t, err, "not trusted", m.key.Public().Fingerprint())

	e.opts.TrustKey = m.key.Public()
	if got := e.install("hello-tool", ""); !got.KeyAccepted {
		t.Errorf("result %+v: want KeyAccepted", got)
	}
}

func TestConcurrentInstallsAreSerialised(t *testing.T) {
	m := newMirror(t)
	names := []string{"alpha-tool", "beta-tool", "gamma-tool"}
	for _, n := range names {
		m.publish(relSpec{name: n, version: "1.0.0"})
	}
	e := newEnv(t, m.source(), m.key.Public())
	var inside, overlaps atomic.Int32
	e.opts.seams.step = func(step string) error {
		if step == "rename" {
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, n := range names {
		wg.Go(func() { _, errs[i] = Install(t.Context(), e.opts, n, "") })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if overlaps.Load() != 0 {
		t.Errorf("%d installs overlapped", overlaps.Load())
	}
	lock, _ := lockfile.Read(e.lock)
	if got := sortedKeys(lock.Entries); !cmp.Equal(got, names) {
		t.Errorf("locked %v, want %v: an install lost another's lock entry", got, names)
	}
	e.assertIntact()
}

func TestWaitingForTheLockHonoursContext(t *testing.T) {
	m := newMirror(t)
	m.publish(relSpec{name: "hello-tool", version: "0.1.0"})
	e := newEnv(t, m.source(), m.key.Public())
	unlock, err := lockPlugins(t.Context(), filepath.Join(e.data, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = Install(ctx, e.opts, "hello-tool", "")
	wantErr(t, err, "waiting for another plugin install", "deadline exceeded")
}

func TestOptionsRequired(t *testing.T) {
	_, err := Install(t.Context(), Options{SDKVersion: "one"}, "hello-tool", "")
	wantErr(t, err, "Options.DataDir", "Options.LockFile", `SDK version "one"`)
	e := newEnv(t, newMirror(t).source())
	e.opts.Sources = nil
	_, err = Install(t.Context(), e.opts, "hello-tool", "")
	wantErr(t, err, "no plugin mirror configured")
	_, err = Install(t.Context(), e.opts, "Hello", "")
	wantErr(t, err, `"Hello" is not a plugin name`)
}
