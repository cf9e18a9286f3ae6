package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Sign checks the release in versionDir (<mirror>/<name>/<version>) and
// writes the detached signatures of its manifest and SHA256SUMS,
// replacing any there. Every archive must match both the manifest and
// SHA256SUMS, and SHA256SUMS the manifest: a signature vouches for what
// users will download, so nothing inconsistent is signed.
func Sign(versionDir string, key plugintrust.PrivateKey) (*plugintrust.Release, error) {
	r, err := loadRelease(versionDir)
	if err != nil {
		return nil, err
	}
	sigs := signatures(r, key)
	for _, n := range sortedKeys(sigs) {
		if err := plugintrust.WriteFileAtomic(filepath.Join(versionDir, n), sigs[n], 0o644); err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
	}
	return r.rel, nil
}

// signatures are the signature files of a release, by name.
func signatures(r *release, key plugintrust.PrivateKey) map[string][]byte {
	return map[string][]byte{
		plugintrust.ManifestName(r.rel.Name, r.rel.Version) + plugintrust.SigSuffix: plugintrust.Sign(key, r.manifest),
		plugintrust.SumsName(r.rel.Name, r.rel.Version) + plugintrust.SigSuffix:     plugintrust.Sign(key, r.sums),
	}
}

// loadRelease reads a version directory's manifest and SHA256SUMS and
// checks them against each other and against the archives on disk
// (archives are hashed, not kept).
func loadRelease(dir string) (*release, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*_manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", dir, err)
	}
	if len(matches) != 1 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
		return nil, fmt.Errorf("sign %s: want one NAME_VERSION_manifest.json, found %d; point at a version directory of a mirror (MIRROR/NAME/VERSION)", dir, len(matches))
	}
	manifest, err := os.ReadFile(matches[0])
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	rel, err := plugintrust.ParseRelease(filepath.Base(matches[0]), manifest)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	mname := plugintrust.ManifestName(rel.Name, rel.Version)
	if filepath.Base(matches[0]) != mname {
		return nil, fmt.Errorf("sign: %s describes %s %s, so it should be named %s", filepath.Base(matches[0]), rel.Name, rel.Version, mname)
	}
	sname := plugintrust.SumsName(rel.Name, rel.Version)
	sumsData, err := os.ReadFile(filepath.Join(dir, sname))
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	sums, err := plugintrust.ParseSums(sname, sumsData)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}

	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	listed := map[string]bool{mname: true}
	if h := plugintrust.HashBytes(manifest); sums[mname] != h {
		bad("%s lists %s with %q, but its SHA-256 is %s", sname, mname, sums[mname], h)
	}
	for _, plat := range rel.PlatformNames() {
		p := rel.Platforms[plat]
		listed[p.Archive] = true
		h, err := plugintrust.HashFile(filepath.Join(dir, p.Archive))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			bad("%s is missing", p.Archive)
			continue
		case err != nil:
			return nil, fmt.Errorf("sign: %w", err)
		}
		if h != p.ArchiveSHA256 {
			bad("%s has SHA-256 %s, but the manifest says %s", p.Archive, h, p.ArchiveSHA256)
		}
		if sums[p.Archive] != h {
			bad("%s lists %s with %q, but its SHA-256 is %s", sname, p.Archive, sums[p.Archive], h)
		}
	}
	for _, n := range sortedKeys(sums) {
		if !listed[n] {
			bad("%s lists %s, which the manifest does not", sname, n)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("refusing to sign %s:\n  - %s", dir, strings.Join(problems, "\n  - "))
	}
	return &release{rel: rel, manifest: manifest, sums: sumsData}, nil
}
