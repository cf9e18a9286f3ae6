package pluginstall

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// release is one version's signed files, verified.
type release struct {
	src  Source
	rel  *plugintrust.Release
	sums plugintrust.Sums
	// manifest and sig are the signed manifest and its signature,
	// verbatim; they are saved beside the installed plugin.
	manifest []byte
	sig      []byte
	signer   plugintrust.PublicKey
}

// manifestHash is the SHA-256 of the signed manifest, as the lock keeps it.
func (r *release) manifestHash() string { return plugintrust.HashBytes(r.manifest) }

// fetchRelease downloads the manifest, SHA256SUMS and their signatures
// of name@version and checks that one trusted key signed both and that
// they agree with each other and with what was asked for.
func fetchRelease(ctx context.Context, src Source, name, version string, ring plugintrust.KeyRing, limit int64) (*release, error) {
	r := &release{src: src}
	manifestPath := versionPath(name, version, plugintrust.ManifestName(name, version))
	sumsPath := versionPath(name, version, plugintrust.SumsName(name, version))
	manifest, sig, err := fetchSigned(ctx, src, manifestPath, limit)
	if err != nil {
		return nil, err
	}
	sums, sumsSig, err := fetchSigned(ctx, src, sumsPath, limit)
	if err != nil {
		return nil, err
	}
	r.manifest, r.sig = manifest, sig
	what := src.String() + ": " + manifestPath
	if r.signer, err = plugintrust.Verify(ring, what, manifest, sig); err != nil {
		return nil, err
	}
	sumsKey, err := plugintrust.Verify(ring, src.String()+": "+sumsPath, sums, sumsSig)
	if err != nil {
		return nil, err
	}
	if !sumsKey.Equal(r.signer) {
		return nil, fmt.Errorf("%s: the manifest is signed by %s, SHA256SUMS by %s: both must be signed by one key",
			src, r.signer.Fingerprint(), sumsKey.Fingerprint())
	}
	if r.rel, err = plugintrust.ParseRelease(what, manifest); err != nil {
		return nil, err
	}
	if r.rel.Name != name || r.rel.Version != version {
		return nil, fmt.Errorf("%s: the manifest is for %s %s, not %s %s", what, r.rel.Name, r.rel.Version, name, version)
	}
	if r.sums, err = plugintrust.ParseSums(src.String()+": "+sumsPath, sums); err != nil {
		return nil, err
	}
	mname := plugintrust.ManifestName(name, version)
	if got := r.sums[mname]; got != r.manifestHash() {
		return nil, fmt.Errorf("%s: SHA256SUMS lists %s as %q, but its SHA-256 is %s", src, mname, got, r.manifestHash())
	}
	return r, nil
}

// fetchSigned downloads a file and its detached signature.
func fetchSigned(ctx context.Context, src Source, path string, limit int64) (data, sig []byte, err error) {
	if data, err = fetch(ctx, src, path, limit); err != nil {
		return nil, nil, err
	}
	if sig, err = fetch(ctx, src, path+plugintrust.SigSuffix, limit); err != nil {
		return nil, nil, err
	}
	return data, sig, nil
}

// matchIndex checks the signed manifest against the unsigned index entry
// that chose it: a mirror whose index disagrees is broken or lying.
func (r *release) matchIndex(iv IndexVersion) error {
	m := r.rel
	var diffs []string
	diff := func(field string, index, manifest any) {
		diffs = append(diffs, fmt.Sprintf("%s: the index says %v, the signed manifest %v", field, index, manifest))
	}
	if iv.Version != m.Version {
		diff("version", iv.Version, m.Version)
	}
	if iv.Kind != m.Kind {
		diff("kind", iv.Kind, m.Kind)
	}
	if iv.Protocol != m.Protocol {
		diff("protocol", iv.Protocol, m.Protocol)
	}
	if iv.SDK != m.SDK {
		diff("sdk", fmt.Sprintf("%q", iv.SDK), fmt.Sprintf("%q", m.SDK))
	}
	platforms := slices.Sorted(slices.Values(iv.Platforms))
	if !slices.Equal(platforms, m.PlatformNames()) {
		diff("platforms", platforms, m.PlatformNames())
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: the index of %s disagrees with the signed manifest of %s:%s",
		r.src, m.Name, m.Version, joinLines(diffs))
}

// archive returns the build for platform and the hash SHA256SUMS gives
// its archive.
func (r *release) archive(platform string) (*plugintrust.Platform, string, error) {
	p := r.rel.Platforms[platform]
	if p == nil {
		return nil, "", fmt.Errorf("%s: the signed manifest of %s %s has no build for %s (has %v)",
			r.src, r.rel.Name, r.rel.Version, platform, r.rel.PlatformNames())
	}
	sum := r.sums[p.Archive]
	if sum == "" {
		return nil, "", fmt.Errorf("%s: SHA256SUMS of %s %s does not list %s", r.src, r.rel.Name, r.rel.Version, p.Archive)
	}
	return p, sum, nil
}

// entryHashes are the lock file's hashes: the entry file's SHA-256 on
// every platform of the release.
func (r *release) entryHashes() map[string]string {
	h := make(map[string]string, len(r.rel.Platforms))
	for name, p := range r.rel.Platforms {
		h[name] = p.Files[r.rel.Entry]
	}
	return h
}

// joinLines lists problems after a colon: inline when there is one, one
// per indented line when there are several.
func joinLines(lines []string) string {
	if len(lines) == 1 {
		return " " + lines[0]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n  " + l)
	}
	return b.String()
}
