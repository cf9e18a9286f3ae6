package pluginstall

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Installation is one plugin as the data directory and the lock file
// know it.
type Installation struct {
	Name string
	// Version is the installed version, "" when the lock file lists the
	// plugin but it is not installed.
	Version string
	// Locked is the version the lock file pins, "" when it lists none.
	Locked string
	// Kind is from the saved signed manifest.
	Kind string
	// Source is the mirror the lock file records.
	Source string
	// Fingerprint is the signer's: the lock file's, or else the key
	// named by the saved signature (checked against the manifest, not
	// against any trusted key).
	Fingerprint string
	Dir         string
}

// Installed lists installed plugins and locked ones, sorted by name and
// version. It reads without taking the install lock, so a concurrent
// install may or may not show.
func Installed(dataDir, lockFile string) ([]Installation, error) {
	lock, err := lockfile.Read(lockFile)
	if err != nil {
		return nil, err
	}
	var out []Installation
	seen := map[string]bool{}
	for _, inst := range scanInstalled(filepath.Join(dataDir, "plugins")) {
		if e := lock.Entries[inst.Name]; e != nil {
			inst.Locked, inst.Source = e.Version, e.Source
			if e.Version == inst.Version {
				inst.Fingerprint = e.Fingerprint
				seen[inst.Name] = true
			}
		}
		out = append(out, inst)
	}
	for _, name := range sortedKeys(lock.Entries) {
		if e := lock.Entries[name]; !seen[name] {
			out = append(out, Installation{Name: name, Locked: e.Version, Source: e.Source, Fingerprint: e.Fingerprint})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return newer(out[j].Version, out[i].Version)
	})
	return out, nil
}

// scanInstalled lists the version directories under pluginsDir, with
// what their saved release says.
func scanInstalled(pluginsDir string) []Installation {
	names, _ := os.ReadDir(pluginsDir)
	var out []Installation
	for _, n := range names {
		if !n.IsDir() || !plugintrust.ValidName(n.Name()) {
			continue
		}
		nameDir := filepath.Join(pluginsDir, n.Name())
		for _, v := range versionDirs(nameDir) {
			inst := Installation{Name: n.Name(), Version: v, Dir: filepath.Join(nameDir, v)}
			inst.Kind, inst.Fingerprint = savedRelease(inst.Dir)
			out = append(out, inst)
		}
	}
	return out
}

// savedRelease reads the kind and the signer's fingerprint from a saved
// release, "" for what it cannot tell.
func savedRelease(dir string) (kind, fingerprint string) {
	data, err := os.ReadFile(filepath.Join(dir, ReleaseFile))
	if err != nil {
		return "", ""
	}
	if rel, err := plugintrust.ParseRelease(ReleaseFile, data); err == nil {
		kind = rel.Kind
	}
	sig, err := os.ReadFile(filepath.Join(dir, ReleaseSigFile))
	if err != nil {
		return kind, ""
	}
	// An empty ring: a valid signature comes back as untrusted, with its key.
	key, _ := plugintrust.Verify(nil, ReleaseFile, data, sig)
	if !key.IsZero() {
		fingerprint = key.Fingerprint()
	}
	return kind, fingerprint
}
