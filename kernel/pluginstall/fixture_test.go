package pluginstall

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// testPlatform is the machine the tests pretend to be.
const testPlatform = "linux/amd64"

// relSpec describes a release to publish; zero fields take defaults.
type relSpec struct {
	name, version string
	kind          string   // "tool"
	sdk           string   // ">= 0.1.0, < 0.2.0"
	protocol      int      // 1
	runtime       string   // "grpc"
	platforms     []string // [testPlatform, "darwin/arm64"]
	caps          plugintrust.Capabilities
	// extra files besides plugin.hcl and the entry, on every platform.
	extra map[string]string
	// hcl replaces the generated plugin.hcl.
	hcl string
	// entries, when set, are the archive's tar entries for every
	// platform; the manifest still lists the honest files.
	entries []tarEntry
	// archive, when set, writes the archive for every platform.
	archive func() []byte
	// signer overrides the mirror's key.
	signer *plugintrust.PrivateKey
	// index overrides the index entry after it is generated.
	index func(*IndexVersion)
}

func (s *relSpec) defaults() {
	if s.kind == "" {
		s.kind = "tool"
	}
	if s.sdk == "" {
		s.sdk = ">= 0.1.0, < 0.2.0"
	}
	if s.protocol == 0 {
		s.protocol = 1
	}
	if s.runtime == "" {
		s.runtime = "grpc"
	}
	if s.platforms == nil {
		s.platforms = []string{testPlatform, "darwin/arm64"}
	}
}

// tarEntry is one entry of a test archive.
type tarEntry struct {
	name string
	typ  byte
	body string
	link string
	size int64 // overrides len(body) in the header when > 0
}

// mirror is a directory mirror the tests publish into.
type mirror struct {
	t   *testing.T
	dir string
	key plugintrust.PrivateKey
}

func newMirror(t *testing.T) *mirror {
	t.Helper()
	return &mirror{t: t, dir: t.TempDir(), key: newKey(t)}
}

func newKey(t *testing.T) plugintrust.PrivateKey {
	t.Helper()
	k, err := plugintrust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (m *mirror) source() Source {
	s, err := NewDirSource(m.dir)
	if err != nil {
		m.t.Fatal(err)
	}
	return s
}

// honestFiles are a release's files on one platform.
func honestFiles(s relSpec, platform string) map[string]string {
	files := map[string]string{
		s.name: fmt.Sprintf("#!/bin/sh\necho %s %s on %s\n", s.name, s.version, platform),
	}
	if s.hcl != "" {
		files["plugin.hcl"] = s.hcl
	} else {
		files["plugin.hcl"] = pluginHCL(s)
	}
	for k, v := range s.extra {
		files[k] = v
	}
	return files
}

func pluginHCL(s relSpec) string {
	q := func(l []string) string {
		b, _ := json.Marshal(l)
		if l == nil {
			return "[]"
		}
		return string(b)
	}
	return fmt.Sprintf(`plugin %q {
  kind       = %q
  version    = %q
  sdk        = %q
  runtime    = %q
  entry      = %q
  components = [%q]
  capabilities {
    network = %t
    paths   = %s
    env     = %s
  }
}
`, s.name, s.kind, s.version, s.sdk, s.runtime, s.name, s.name, s.caps.Network, q(s.caps.Paths), q(s.caps.Env))
}

// publish writes a signed release and adds it to the plugin's index.
func (m *mirror) publish(s relSpec) *plugintrust.Release {
	m.t.Helper()
	s.defaults()
	rel := &plugintrust.Release{Format: 1, Name: s.name, Version: s.version, Kind: s.kind, Protocol: s.protocol,
		SDK: s.sdk, Runtime: s.runtime, Entry: s.name, Capabilities: s.caps, Platforms: map[string]*plugintrust.Platform{}}
	sums := plugintrust.Sums{}
	for _, p := range s.platforms {
		files := honestFiles(s, p)
		var archive []byte
		switch {
		case s.archive != nil:
			archive = s.archive()
		case s.entries != nil:
			archive = tarGz(m.t, s.entries)
		default:
			archive = tarGz(m.t, fileEntries(files))
		}
		name := plugintrust.ArchiveName(s.name, s.version, p)
		hashes := map[string]string{}
		for f, body := range files {
			hashes[f] = plugintrust.HashBytes([]byte(body))
		}
		rel.Platforms[p] = &plugintrust.Platform{Archive: name, ArchiveSHA256: plugintrust.HashBytes(archive), Files: hashes}
		sums[name] = plugintrust.HashBytes(archive)
		m.write(versionPath(s.name, s.version, name), archive)
	}
	if err := rel.Validate(); err != nil {
		m.t.Fatalf("fixture release: %v", err)
	}
	key := m.key
	if s.signer != nil {
		key = *s.signer
	}
	manifest := rel.Marshal()
	mname := plugintrust.ManifestName(s.name, s.version)
	sums[mname] = plugintrust.HashBytes(manifest)
	m.write(versionPath(s.name, s.version, mname), manifest)
	m.write(versionPath(s.name, s.version, mname+".sig"), plugintrust.Sign(key, manifest))
	sumsName := plugintrust.SumsName(s.name, s.version)
	m.write(versionPath(s.name, s.version, sumsName), sums.Marshal())
	m.write(versionPath(s.name, s.version, sumsName+".sig"), plugintrust.Sign(key, sums.Marshal()))
	iv := IndexVersion{Version: s.version, Kind: s.kind, Protocol: s.protocol, SDK: s.sdk, Platforms: s.platforms}
	if s.index != nil {
		s.index(&iv)
	}
	m.addToIndex(s.name, iv)
	return rel
}

func (m *mirror) addToIndex(name string, iv IndexVersion) {
	m.t.Helper()
	ix := Index{Format: 1, Name: name}
	if data, err := os.ReadFile(filepath.Join(m.dir, name, IndexFile)); err == nil {
		if err := json.Unmarshal(data, &ix); err != nil {
			m.t.Fatal(err)
		}
	}
	ix.Versions = slices.DeleteFunc(ix.Versions, func(v IndexVersion) bool { return v.Version == iv.Version })
	ix.Versions = append(ix.Versions, iv)
	data, _ := json.MarshalIndent(ix, "", "  ")
	m.write(name+"/"+IndexFile, data)
}

// path is a file of the mirror.
func (m *mirror) path(rel string) string { return filepath.Join(m.dir, filepath.FromSlash(rel)) }

func (m *mirror) write(rel string, data []byte) {
	m.t.Helper()
	p := m.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mirror) read(rel string) []byte {
	m.t.Helper()
	data, err := os.ReadFile(m.path(rel))
	if err != nil {
		m.t.Fatal(err)
	}
	return data
}

func fileEntries(files map[string]string) []tarEntry {
	var out []tarEntry
	for _, name := range sortedKeys(files) {
		out = append(out, tarEntry{name: name, typ: tar.TypeReg, body: files[name]})
	}
	return out
}

func tarGz(t *testing.T, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if e.typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if e.typ == tar.TypeDir {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// env is a data directory and lock file to install into.
type env struct {
	t    *testing.T
	data string
	lock string
	opts Options
}

func newEnv(t *testing.T, src Source, trusted ...plugintrust.PublicKey) *env {
	t.Helper()
	data := t.TempDir()
	lock := filepath.Join(t.TempDir(), "project", ".sparrow", "sparrow.lock.hcl")
	return &env{t: t, data: data, lock: lock, opts: Options{DataDir: data, LockFile: lock, Sources: []Source{src},
		TrustedKeys: trusted, Platform: testPlatform, SDKVersion: "0.1.0", Protocol: 1}}
}

// snapshot records every file, directory and link under the data
// directory, and the lock file, by content.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(e.data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.data, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			snap[rel] = "link " + target
		case d.IsDir():
			snap[rel] = fmt.Sprintf("dir %v", fi.Mode())
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			snap[rel] = fmt.Sprintf("file %v %s", fi.Mode(), plugintrust.HashBytes(data))
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if data, err := os.ReadFile(e.lock); err == nil {
		snap["LOCK"] = string(data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		e.t.Fatal(err)
	}
	return snap
}

func (e *env) assertUnchanged(before map[string]string) {
	e.t.Helper()
	if diff := cmp.Diff(before, e.snapshot()); diff != "" {
		e.t.Errorf("data directory or lock file changed (-before +after):\n%s", diff)
	}
}

func (e *env) install(name, constraint string) *Result {
	e.t.Helper()
	r, err := Install(e.t.Context(), e.opts, name, constraint)
	if err != nil {
		e.t.Fatalf("install %s %q: %v", name, constraint, err)
	}
	return r
}

// assertIntact checks that Verify finds every locked plugin intact.
func (e *env) assertIntact() {
	e.t.Helper()
	reports, err := Verify(e.t.Context(), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range reports {
		for _, m := range r.Mismatches {
			e.t.Errorf("verify: %s", m)
		}
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q\ndoes not contain %q", err, p)
		}
	}
}
