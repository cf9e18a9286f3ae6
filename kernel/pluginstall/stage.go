package pluginstall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Names inside <DataDir>/plugins that are not plugins. Discovery skips
// them: a staging or trash directory holds no plugin.hcl and its one
// subdirectory is not named like a version.
const (
	lockName      = ".lock"
	stagingPrefix = ".staging-"
	trashPrefix   = ".trash-"
	unpackedDir   = "unpacked"
	archiveFile   = "archive.tar.gz"
)

// staged is a verified plugin directory, ready to be renamed into place.
type staged struct {
	tmp string // the staging directory, removed when done
	dir string // tmp/unpacked: the plugin
}

func (s *staged) cleanup() { os.RemoveAll(s.tmp) }

// stage downloads the archive of r for platform into a temporary
// directory in <DataDir>/plugins, checks it against SHA256SUMS and the
// manifest, unpacks it and checks every file and plugin.hcl. On error
// nothing is left behind.
func stage(ctx context.Context, opts Options, r *release, platform string) (*staged, error) {
	p, sum, err := r.archive(platform)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(opts.pluginsDir(), stagingPrefix)
	if err != nil {
		return nil, fmt.Errorf("make staging directory: %w", err)
	}
	st := &staged{tmp: tmp, dir: filepath.Join(tmp, unpackedDir)}
	if err := st.fill(ctx, opts, r, p, sum); err != nil {
		st.cleanup()
		return nil, err
	}
	return st, nil
}

// fill downloads, unpacks and checks the archive into the staging
// directory and saves the signed release beside the plugin's files.
func (st *staged) fill(ctx context.Context, opts Options, r *release, p *plugintrust.Platform, sum string) error {
	tmp := st.tmp
	archive := filepath.Join(tmp, archiveFile)
	if err := download(ctx, opts, r.src, versionPath(r.rel.Name, r.rel.Version, p.Archive), archive, p.ArchiveSHA256, sum); err != nil {
		return err
	}
	if err := unpackFile(opts, r, p, archive, st.dir); err != nil {
		return err
	}
	if err := checkPluginHCL(r.rel, st.dir); err != nil {
		return err
	}
	if err := writeFile(opts, filepath.Join(st.dir, ReleaseFile), r.manifest); err != nil {
		return fmt.Errorf("save the signed release: %w", err)
	}
	if err := writeFile(opts, filepath.Join(st.dir, ReleaseSigFile), r.sig); err != nil {
		return fmt.Errorf("save the signed release: %w", err)
	}
	return os.Remove(archive)
}

// download copies a mirror file to path, size-capped, and checks that its
// SHA-256 equals both the manifest's and SHA256SUMS'.
func download(ctx context.Context, opts Options, src Source, from, path, manifestSum, sumsSum string) error {
	in, err := src.Open(ctx, from, opts.seams.limits.archive)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("download %s: %w", from, err)
	}
	h := sha256.New()
	_, err = io.Copy(opts.wrap(archiveFile, io.MultiWriter(f, h)), in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("download %s from %s: %w", from, src, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != sumsSum {
		return fmt.Errorf("%s: %s has SHA-256 %s, SHA256SUMS says %s: the archive was altered or damaged", src, from, got, sumsSum)
	}
	if got != manifestSum {
		return fmt.Errorf("%s: %s has SHA-256 %s, the signed manifest says %s", src, from, got, manifestSum)
	}
	return nil
}

// unpackFile unpacks the downloaded archive and checks its files against
// the manifest.
func unpackFile(opts Options, r *release, p *plugintrust.Platform, archive, dest string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	u := &unpacker{dest: dest, entry: r.rel.Entry, limits: opts.seams.limits, wrap: opts.wrap, what: p.Archive}
	files, err := u.unpack(f)
	if err != nil {
		return err
	}
	return checkFiles(p.Archive, files, p.Files)
}

// checkPluginHCL reads the unpacked plugin.hcl and reports every way it
// disagrees with the signed manifest.
func checkPluginHCL(rel *plugintrust.Release, dir string) error {
	path := filepath.Join(dir, pluginhost.ManifestFile)
	m, diags := pluginhost.ReadManifest(path)
	if diags.HasErrors() {
		return fmt.Errorf("%s: %w", pluginhost.ManifestFile, diags)
	}
	var diffs []string
	diff := func(field string, hcl, signed any) {
		diffs = append(diffs, fmt.Sprintf("%s: plugin.hcl says %v, the signed manifest %v", field, hcl, signed))
	}
	if m.Name != rel.Name {
		diff("name", m.Name, rel.Name)
	}
	if m.Version.Original() != rel.Version {
		diff("version", m.Version.Original(), rel.Version)
	}
	if string(m.Kind) != rel.Kind {
		diff("kind", m.Kind, rel.Kind)
	}
	if m.SDKRange != rel.SDK {
		diff("sdk", fmt.Sprintf("%q", m.SDKRange), fmt.Sprintf("%q", rel.SDK))
	}
	if string(m.Runtime) != rel.Runtime {
		diff("runtime", m.Runtime, rel.Runtime)
	}
	if want := filepath.Join(dir, filepath.FromSlash(rel.Entry)); m.Entry != want {
		diff("entry", relTo(dir, m.Entry), rel.Entry)
	}
	if c, s := m.Capabilities, rel.Capabilities; c.Network != s.Network || !sameList(c.Paths, s.Paths) || !sameList(c.Env, s.Env) || c.Workspace != s.Workspace {
		diff("capabilities", fmt.Sprintf("network=%t paths=%q env=%q workspace=%t", c.Network, c.Paths, c.Env, c.Workspace),
			fmt.Sprintf("network=%t paths=%q env=%q workspace=%t", s.Network, s.Paths, s.Env, s.Workspace))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("plugin.hcl disagrees with the signed manifest:%s", joinLines(diffs))
	}
	return nil
}

func relTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// sameList compares lists, nil and empty alike.
func sameList(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) }

// writeFile writes a new file and syncs it.
func writeFile(opts Options, path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = opts.wrap(filepath.Base(path), f).Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
