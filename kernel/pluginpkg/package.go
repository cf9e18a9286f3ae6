package pluginpkg

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
	"github.com/sparrow-cli/sparrow/sdk"
)

// Options tune Package. The zero value packages unsigned and refuses to
// replace a version the mirror already holds with other content.
type Options struct {
	// Key, when set, signs the release as Sign does, before it appears
	// in the mirror.
	Key *plugintrust.PrivateKey
	// Force replaces a published version whose content differs. Users who
	// installed the old build will find it no longer matches its release;
	// bumping the version is almost always the better fix.
	Force bool
}

// Result says what Package did.
type Result struct {
	Release *plugintrust.Release
	// Dir is the version directory, <mirror>/<name>/<version>.
	Dir string
	// Files are the names in Dir, sorted.
	Files []string
	// Unchanged: the mirror already held exactly this release; only the
	// indexes (and, with a key, the signatures) were written.
	Unchanged bool
	// Replaced: a different release of the same version was replaced
	// (Options.Force).
	Replaced bool
	// Signer is the key that signed, when Options.Key was set.
	Signer *plugintrust.PublicKey
}

// PublishedError refuses to overwrite a published version with other
// content.
type PublishedError struct {
	Name, Version, Dir string
	// Differs names what differs: "manifest", an archive, a missing file.
	Differs []string
}

func (e *PublishedError) Error() string {
	return fmt.Sprintf("%s %s is already published in %s with different content (%s); a published version must not change under the users who installed it: bump the version in plugin.hcl",
		e.Name, e.Version, e.Dir, strings.Join(e.Differs, ", "))
}

// release is a packaged version, in memory.
type release struct {
	rel      *plugintrust.Release
	manifest []byte
	sums     []byte
	archives map[string][]byte // file name → bytes
}

// files are the release's files by name (without signatures).
func (r *release) files() map[string][]byte {
	out := map[string][]byte{
		plugintrust.ManifestName(r.rel.Name, r.rel.Version): r.manifest,
		plugintrust.SumsName(r.rel.Name, r.rel.Version):     r.sums,
	}
	for n, b := range r.archives {
		out[n] = b
	}
	return out
}

// Package packages the plugin in srcDir into mirrorDir/<name>/<version>/
// and records it in the mirror's indexes (docs/plugin-distribution.md).
//
// srcDir holds plugin.hcl and the files every build shares (README,
// LICENSE, …) at its top level, and each build's entry in an
// <os>_<arch>/ directory; a WASM plugin has its module at the top level
// instead. Dot files are skipped; links are refused.
func Package(srcDir, mirrorDir string, opts Options) (*Result, error) {
	src, err := readSource(srcDir)
	if err != nil {
		return nil, err
	}
	r, err := build(src)
	if err != nil {
		return nil, err
	}
	name, version := r.rel.Name, r.rel.Version
	dir := filepath.Join(mirrorDir, name, version)
	res := &Result{Release: r.rel, Dir: dir}
	differs, exists, err := compare(dir, r)
	if err != nil {
		return nil, err
	}
	indexes, err := planIndexes(mirrorDir, r.rel)
	if err != nil {
		return nil, err
	}
	switch {
	case exists && len(differs) == 0:
		res.Unchanged = true
		if opts.Key != nil {
			if _, err := Sign(dir, *opts.Key); err != nil {
				return nil, err
			}
		}
	case exists && !opts.Force:
		return nil, &PublishedError{Name: name, Version: version, Dir: dir, Differs: differs}
	default:
		res.Replaced = exists
		files := r.files()
		if opts.Key != nil {
			for n, sig := range signatures(r, *opts.Key) {
				files[n] = sig
			}
		}
		if err := publishDir(dir, files); err != nil {
			return nil, err
		}
	}
	if opts.Key != nil {
		pub := opts.Key.Public()
		res.Signer = &pub
	}
	if err := indexes.write(); err != nil {
		return nil, fmt.Errorf("%s %s is in the mirror, but its index was not updated: %w", name, version, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		res.Files = append(res.Files, e.Name())
	}
	return res, nil
}

// build makes the archives, the manifest and SHA256SUMS.
func build(src *source) (*release, error) {
	m := src.manifest
	rel := &plugintrust.Release{
		Format:   plugintrust.ReleaseFormat,
		Name:     m.Name,
		Version:  m.Version.Original(),
		Kind:     string(m.Kind),
		Protocol: sdk.ProtocolVersion,
		SDK:      m.SDKRange,
		Runtime:  string(m.Runtime),
		Entry:    src.entry,
		Capabilities: plugintrust.Capabilities{
			Network: m.Capabilities.Network,
			Paths:   nonNil(m.Capabilities.Paths),
			Env:     nonNil(m.Capabilities.Env),
			// Enforced when the plugin runs confined: signed like the rest.
			Workspace: m.Capabilities.Workspace,
		},
		Platforms: map[string]*plugintrust.Platform{},
	}
	r := &release{rel: rel, archives: map[string][]byte{}}
	sums := plugintrust.Sums{}
	var pinProblems []string
	for _, plat := range sortedKeys(src.platforms) {
		data, hashes, err := buildArchive(src.platforms[plat], src.entry)
		if err != nil {
			return nil, err
		}
		name := plugintrust.ArchiveName(rel.Name, rel.Version, plat)
		rel.Platforms[plat] = &plugintrust.Platform{Archive: name, ArchiveSHA256: plugintrust.HashBytes(data), Files: hashes}
		r.archives[name] = data
		sums[name] = rel.Platforms[plat].ArchiveSHA256
		if m.SHA256 != "" && hashes[src.entry] != m.SHA256 {
			pinProblems = append(pinProblems, fmt.Sprintf("plugin.hcl pins sha256 = %q, but the %s build of %s has %s", m.SHA256, plat, src.entry, hashes[src.entry]))
		}
	}
	if len(pinProblems) > 0 {
		if len(src.platforms) > 1 {
			pinProblems = append(pinProblems, "a pin fits one build only; the release manifest pins every platform's files, so drop sha256 from plugin.hcl")
		}
		return nil, &SourceError{Dir: src.dir, Problems: pinProblems}
	}
	if err := rel.Validate(); err != nil {
		return nil, fmt.Errorf("release manifest: %w", err)
	}
	r.manifest = rel.Marshal()
	sums[plugintrust.ManifestName(rel.Name, rel.Version)] = plugintrust.HashBytes(r.manifest)
	r.sums = sums.Marshal()
	return r, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// compare reports what differs between the release and what dir holds;
// exists is false when there is no dir. Signatures are not compared, and
// the manifest and SHA256SUMS are named only when every archive is the
// same (they differ whenever an archive does).
func compare(dir string, r *release) (differs []string, exists bool, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", dir, err)
	}
	want := r.files()
	for _, e := range entries {
		n := e.Name()
		if _, ok := want[n]; !ok && !strings.HasSuffix(n, plugintrust.SigSuffix) && !strings.HasPrefix(n, ".") {
			differs = append(differs, n+" is not part of the new release")
		}
	}
	var meta []string
	for _, n := range sortedKeys(want) {
		have, err := os.ReadFile(filepath.Join(dir, n))
		var why string
		switch {
		case errors.Is(err, fs.ErrNotExist):
			why = n + " is missing"
		case err != nil:
			return nil, true, fmt.Errorf("read %s: %w", n, err)
		case !bytes.Equal(have, want[n]):
			why = n + " differs"
		default:
			continue
		}
		if _, archive := r.archives[n]; archive {
			differs = append(differs, why)
		} else {
			meta = append(meta, why)
		}
	}
	if len(differs) == 0 {
		differs = meta
	}
	slices.Sort(differs)
	return differs, true, nil
}
