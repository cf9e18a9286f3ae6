package pluginpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

const helloManifest = `plugin "hello" {
  kind       = "tool"
  version    = "0.2.0"
  sdk        = ">= 0.1.0, < 0.2.0"
  entry      = "hello"
  components = ["greet"]
  capabilities {
    network = true
    env     = ["HOME"]
  }
}
`

// writeTree creates files (slash paths → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// helloSource is a grpc plugin with two platform builds.
func helloSource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugin.hcl":         helloManifest,
		"README.md":          "# hello\n",
		"LICENSE":            "MIT\n",
		"docs/usage.md":      "greet someone\n",
		".DS_Store":          "junk",
		"linux_amd64/hello":  "linux build",
		"darwin_arm64/hello": "darwin build",
	})
	return dir
}

// readDir maps every file under dir (slash paths) to its bytes.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustPackage(t *testing.T, src, mirror string, opts Options) *Result {
	t.Helper()
	res, err := Package(src, mirror, opts)
	if err != nil {
		t.Fatalf("Package: %v", err)
	}
	return res
}

func TestPackageIsDeterministic(t *testing.T) {
	src := helloSource(t)
	a, b := t.TempDir(), t.TempDir()
	mustPackage(t, src, a, Options{})

	// Times, modes and the order files were created in must not matter.
	later := time.Now().Add(48 * time.Hour)
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		os.Chtimes(p, later, later)
		if !d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	mustPackage(t, src, b, Options{})
	if diff := cmp.Diff(readDir(t, a), readDir(t, b)); diff != "" {
		t.Fatalf("two packagings differ (-first +second):\n%s", diff)
	}

	// Packaging again into the same mirror is a no-op.
	before := readDir(t, a)
	res := mustPackage(t, src, a, Options{})
	if !res.Unchanged || res.Replaced {
		t.Errorf("repackaging: Unchanged=%t Replaced=%t, want true, false", res.Unchanged, res.Replaced)
	}
	if diff := cmp.Diff(before, readDir(t, a)); diff != "" {
		t.Errorf("repackaging changed the mirror:\n%s", diff)
	}
}

func TestPackageManifest(t *testing.T) {
	src, mirror := helloSource(t), t.TempDir()
	res := mustPackage(t, src, mirror, Options{})
	dir := filepath.Join(mirror, "hello", "0.2.0")
	if res.Dir != dir {
		t.Errorf("Dir = %s, want %s", res.Dir, dir)
	}
	wantFiles := []string{"hello_0.2.0_SHA256SUMS", "hello_0.2.0_darwin_arm64.tar.gz", "hello_0.2.0_linux_amd64.tar.gz", "hello_0.2.0_manifest.json"}
	if diff := cmp.Diff(wantFiles, res.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}

	data, err := os.ReadFile(filepath.Join(dir, "hello_0.2.0_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := plugintrust.ParseRelease("manifest", data)
	if err != nil {
		t.Fatal(err)
	}
	h := plugintrust.HashBytes
	shared := map[string]string{
		"plugin.hcl":    h([]byte(helloManifest)),
		"README.md":     h([]byte("# hello\n")),
		"LICENSE":       h([]byte("MIT\n")),
		"docs/usage.md": h([]byte("greet someone\n")),
	}
	files := func(entry string) map[string]string {
		m := map[string]string{"hello": h([]byte(entry))}
		for k, v := range shared {
			m[k] = v
		}
		return m
	}
	want := &plugintrust.Release{
		Format: 1, Name: "hello", Version: "0.2.0", Kind: "tool", Protocol: 1,
		SDK: ">= 0.1.0, < 0.2.0", Runtime: "grpc", Entry: "hello",
		Capabilities: plugintrust.Capabilities{Network: true, Paths: []string{}, Env: []string{"HOME"}},
		Platforms: map[string]*plugintrust.Platform{
			"darwin/arm64": {Archive: "hello_0.2.0_darwin_arm64.tar.gz", ArchiveSHA256: fileHash(t, dir, "hello_0.2.0_darwin_arm64.tar.gz"), Files: files("darwin build")},
			"linux/amd64":  {Archive: "hello_0.2.0_linux_amd64.tar.gz", ArchiveSHA256: fileHash(t, dir, "hello_0.2.0_linux_amd64.tar.gz"), Files: files("linux build")},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, res.Release); diff != "" {
		t.Errorf("Result.Release (-want +got):\n%s", diff)
	}

	sums, err := os.ReadFile(filepath.Join(dir, "hello_0.2.0_SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	wantSums := fileHash(t, dir, "hello_0.2.0_darwin_arm64.tar.gz") + "  hello_0.2.0_darwin_arm64.tar.gz\n" +
		fileHash(t, dir, "hello_0.2.0_linux_amd64.tar.gz") + "  hello_0.2.0_linux_amd64.tar.gz\n" +
		h(data) + "  hello_0.2.0_manifest.json\n"
	if diff := cmp.Diff(wantSums, string(sums)); diff != "" {
		t.Errorf("SHA256SUMS (-want +got):\n%s", diff)
	}
}

type tarEntry struct {
	Name    string
	Type    byte
	Mode    int64
	Uid     int
	Gid     int
	Uname   string
	ModTime int64
	Body    string
}

func readArchive(t *testing.T, path string) []tarEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out = append(out, tarEntry{hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid, hdr.Uname, hdr.ModTime.Unix(), string(body)})
	}
}

func TestArchiveLayout(t *testing.T) {
	src, mirror := helloSource(t), t.TempDir()
	mustPackage(t, src, mirror, Options{})
	got := readArchive(t, filepath.Join(mirror, "hello", "0.2.0", "hello_0.2.0_linux_amd64.tar.gz"))
	want := []tarEntry{
		{"LICENSE", tar.TypeReg, 0o644, 0, 0, "", 0, "MIT\n"},
		{"README.md", tar.TypeReg, 0o644, 0, 0, "", 0, "# hello\n"},
		{"docs/", tar.TypeDir, 0o755, 0, 0, "", 0, ""},
		{"docs/usage.md", tar.TypeReg, 0o644, 0, 0, "", 0, "greet someone\n"},
		{"hello", tar.TypeReg, 0o755, 0, 0, "", 0, "linux build"},
		{"plugin.hcl", tar.TypeReg, 0o644, 0, 0, "", 0, helloManifest},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive entries (-want +got):\n%s", diff)
	}
}

// wasmHelloManifest is helloManifest as a WASM tool plugin.
const wasmHelloManifest = `plugin "hello" {
  kind       = "tool"
  version    = "0.2.0"
  sdk        = ">= 0.1.0, < 0.2.0"
  runtime    = "wasm"
  entry      = "hello.wasm"
  components = ["greet"]
  tool "greet" {
    risk         = "read-only"
    description  = "Greets."
    input_schema = { type = "object" }
  }
}
`

func TestPackageWASM(t *testing.T) {
	src, mirror := t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{
		"plugin.hcl": wasmHelloManifest,
		"hello.wasm": "\x00asm module",
		"README.md":  "# hello\n",
	})
	res := mustPackage(t, src, mirror, Options{})
	if diff := cmp.Diff([]string{"wasm"}, res.Release.PlatformNames()); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	if res.Release.Runtime != "wasm" || res.Release.Entry != "hello.wasm" {
		t.Errorf("runtime %q entry %q, want wasm hello.wasm", res.Release.Runtime, res.Release.Entry)
	}
	var names []string
	for _, e := range readArchive(t, filepath.Join(res.Dir, "hello_0.2.0_wasm.tar.gz")) {
		names = append(names, e.Name)
		if e.Name == "hello.wasm" && e.Mode != 0o755 {
			t.Errorf("hello.wasm mode %o, want 755", e.Mode)
		}
	}
	if diff := cmp.Diff([]string{"README.md", "hello.wasm", "plugin.hcl"}, names); diff != "" {
		t.Errorf("archive (-want +got):\n%s", diff)
	}
}

func fileHash(t *testing.T, dir, name string) string {
	t.Helper()
	h, err := plugintrust.HashFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// manifestWithVersion is helloManifest at another name and version.
func manifestWithVersion(name, version string) string {
	return strings.NewReplacer(`plugin "hello"`, `plugin "`+name+`"`, `"0.2.0"`, `"`+version+`"`, `entry      = "hello"`, `entry      = "`+name+`"`).Replace(helloManifest)
}

func TestIndexMerging(t *testing.T) {
	mirror := t.TempDir()
	pkg := func(name, version, build string) {
		t.Helper()
		src := t.TempDir()
		writeTree(t, src, map[string]string{"plugin.hcl": manifestWithVersion(name, version), "linux_arm64/" + name: build})
		mustPackage(t, src, mirror, Options{Force: true})
	}
	pkg("hello", "0.10.0", "a")
	pkg("zeta", "1.0.0", "a")
	pkg("hello", "0.2.0", "a")
	pkg("hello", "0.9.0-rc.1", "a")
	pkg("hello", "0.2.0", "b") // forced replacement of the same version: still one entry

	var mi mirrorIndex
	readJSON(t, filepath.Join(mirror, "index.json"), &mi)
	if diff := cmp.Diff(mirrorIndex{Format: 1, Plugins: []string{"hello", "zeta"}}, mi); diff != "" {
		t.Errorf("mirror index (-want +got):\n%s", diff)
	}
	var pi pluginIndex
	readJSON(t, filepath.Join(mirror, "hello", "index.json"), &pi)
	v := func(version string) indexVersion {
		return indexVersion{Version: version, Kind: "tool", Protocol: 1, SDK: ">= 0.1.0, < 0.2.0", Platforms: []string{"linux/arm64"}}
	}
	want := pluginIndex{Format: 1, Name: "hello", Versions: []indexVersion{v("0.2.0"), v("0.9.0-rc.1"), v("0.10.0")}}
	if diff := cmp.Diff(want, pi); diff != "" {
		t.Errorf("plugin index (-want +got):\n%s", diff)
	}
	if raw, _ := os.ReadFile(filepath.Join(mirror, "hello", "index.json")); !bytes.Contains(raw, []byte(`"sdk": ">= 0.1.0, < 0.2.0"`)) {
		t.Errorf("the index escapes or reformats the SDK range:\n%s", raw)
	}
}

func TestBrokenIndexIsNotOverwritten(t *testing.T) {
	for name, content := range map[string]string{
		"index.json":       `{"format": 1, "plugins": ["a",`,
		"hello/index.json": `{"format": 2, "name": "hello", "versions": []}`,
	} {
		t.Run(name, func(t *testing.T) {
			mirror := t.TempDir()
			writeTree(t, mirror, map[string]string{name: content})
			_, err := Package(helloSource(t), mirror, Options{})
			if err == nil || !strings.Contains(err.Error(), "not rewritten") {
				t.Fatalf("err = %v, want a refusal to rewrite the index", err)
			}
			if _, err := os.Stat(filepath.Join(mirror, "hello", "0.2.0")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the version was published although its index could not be updated")
			}
			if b, _ := os.ReadFile(filepath.Join(mirror, name)); string(b) != content {
				t.Errorf("%s was rewritten: %s", name, b)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestRepublishing(t *testing.T) {
	src, mirror := helloSource(t), t.TempDir()
	mustPackage(t, src, mirror, Options{})
	before := readDir(t, mirror)

	// A rebuilt binary under the same version: refused, mirror untouched.
	writeTree(t, src, map[string]string{"linux_amd64/hello": "linux build, take two"})
	os.RemoveAll(filepath.Join(src, "darwin_arm64"))
	_, err := Package(src, mirror, Options{})
	var pe *PublishedError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *PublishedError", err)
	}
	wantDiffers := []string{
		"hello_0.2.0_darwin_arm64.tar.gz is not part of the new release",
		"hello_0.2.0_linux_amd64.tar.gz differs",
	}
	if diff := cmp.Diff(wantDiffers, pe.Differs); diff != "" {
		t.Errorf("Differs (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "bump the version in plugin.hcl") {
		t.Errorf("error does not say what to do: %v", err)
	}
	if diff := cmp.Diff(before, readDir(t, mirror)); diff != "" {
		t.Errorf("a refused packaging changed the mirror:\n%s", diff)
	}

	// Forced: replaced whole, the dropped platform's archive gone.
	res := mustPackage(t, src, mirror, Options{Force: true})
	if !res.Replaced {
		t.Error("Replaced = false after a forced republish")
	}
	want := []string{"hello_0.2.0_SHA256SUMS", "hello_0.2.0_linux_amd64.tar.gz", "hello_0.2.0_manifest.json"}
	if diff := cmp.Diff(want, res.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Join(mirror, "hello"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	var pi pluginIndex
	readJSON(t, filepath.Join(mirror, "hello", "index.json"), &pi)
	if diff := cmp.Diff([]string{"linux/amd64"}, pi.Versions[0].Platforms); diff != "" {
		t.Errorf("index platforms after the forced republish (-want +got):\n%s", diff)
	}
}

func TestPackageRefusals(t *testing.T) {
	wasmManifest := wasmHelloManifest
	pinned := func(pin string) string {
		return strings.Replace(helloManifest, `entry      = "hello"`, "entry      = \"hello\"\n  sha256     = \""+pin+"\"", 1)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		files map[string]string
		// link, when set, is a symlink to make: name → target.
		link [2]string
		want []string
	}{
		{name: "no plugin.hcl", files: map[string]string{"linux_amd64/hello": "x"},
			want: []string{"no plugin.hcl"}},
		{name: "invalid plugin.hcl", files: map[string]string{"plugin.hcl": `plugin "hello" { kind = "gadget" }`, "linux_amd64/hello": "x"},
			want: []string{"plugin manifest:", "plugin.hcl:1"}},
		{name: "no builds", files: map[string]string{"plugin.hcl": helloManifest, "README.md": "x"},
			want: []string{"no platform builds: put each build's hello in an <os>_<arch>/ directory"}},
		{name: "entry missing in one platform", files: map[string]string{"plugin.hcl": helloManifest, "linux_amd64/hello": "x", "darwin_arm64/hello-tool": "x", "linux_arm64/other": "x"},
			want: []string{"darwin_arm64/ has no hello", "linux_arm64/ has no hello"}},
		{name: "entry at the top level", files: map[string]string{"plugin.hcl": helloManifest, "hello": "x", "linux_amd64/hello": "x"},
			want: []string{"hello (the entry) is at the top level"}},
		{name: "file both shared and per platform", files: map[string]string{"plugin.hcl": helloManifest, "README.md": "x", "linux_amd64/hello": "x", "linux_amd64/README.md": "y"},
			want: []string{"linux_amd64/README.md is also a shared file"}},
		{name: "symlink", files: map[string]string{"plugin.hcl": helloManifest, "linux_amd64/hello": "x"}, link: [2]string{"LICENSE", "/etc/hostname"},
			want: []string{"LICENSE is not a regular file"}},
		{name: "wrong build in a platform directory", files: map[string]string{"plugin.hcl": helloManifest, "darwin_arm64/hello": string(self)},
			want: []string{"darwin_arm64/hello is an ELF executable, not a darwin/arm64 build"}},
		{name: "pin matches no build", files: map[string]string{"plugin.hcl": pinned(strings.Repeat("0", 64)), "linux_amd64/hello": "x"},
			want: []string{`plugin.hcl pins sha256 = "` + strings.Repeat("0", 64) + `", but the linux/amd64 build of hello has ` + plugintrust.HashBytes([]byte("x"))}},
		{name: "pin fits one build of two", files: map[string]string{"plugin.hcl": pinned(plugintrust.HashBytes([]byte("x"))), "linux_amd64/hello": "x", "linux_arm64/hello": "y"},
			want: []string{"the linux/arm64 build of hello has", "a pin fits one build only"}},
		{name: "wasm module missing", files: map[string]string{"plugin.hcl": wasmManifest, "README.md": "x"},
			want: []string{"entry hello.wasm is missing"}},
		{name: "wasm with a platform build", files: map[string]string{"plugin.hcl": wasmManifest, "hello.wasm": "x", "linux_amd64/hello.wasm": "x"},
			want: []string{"linux_amd64/ looks like a linux/amd64 build, but runtime is wasm"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src, mirror := t.TempDir(), t.TempDir()
			writeTree(t, src, tc.files)
			if tc.link[0] != "" {
				if err := os.Symlink(tc.link[1], filepath.Join(src, tc.link[0])); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Package(src, mirror, Options{})
			if err == nil {
				t.Fatal("Package succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if entries, _ := os.ReadDir(mirror); len(entries) != 0 {
				t.Errorf("a refused packaging wrote into the mirror: %v", entries)
			}
		})
	}
}

func TestPinMatchingTheOnlyBuild(t *testing.T) {
	src, mirror := t.TempDir(), t.TempDir()
	pin := plugintrust.HashBytes([]byte("x"))
	writeTree(t, src, map[string]string{
		"plugin.hcl":        strings.Replace(helloManifest, `entry      = "hello"`, "entry      = \"hello\"\n  sha256     = \""+pin+"\"", 1),
		"linux_amd64/hello": "x",
	})
	mustPackage(t, src, mirror, Options{})
}

func TestManifestErrorCarriesDiagnostics(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"plugin.hcl": "plugin \"hello\" {\n  kind = \"gadget\"\n}\n", "linux_amd64/hello": "x"})
	_, err := Package(src, t.TempDir(), Options{})
	var me *ManifestError
	if !errors.As(err, &me) || !me.Diags.HasErrors() {
		t.Fatalf("err = %v, want *ManifestError with diagnostics", err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte("plugin.hcl:")) {
		t.Errorf("diagnostics do not name the file: %v", err)
	}
}
