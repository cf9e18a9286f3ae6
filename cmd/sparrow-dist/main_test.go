package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// fakeRepo is a repository with a gRPC plugin and a WASM plugin laid out
// like plugins/.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/fake\n\ngo 1.22\n",
		"plugins/tools/tiny/plugin.hcl": `plugin "tiny" {
  kind       = "tool"
  version    = "1.2.3"
  sdk        = ">= 0.1.0, < 0.2.0"
  entry      = "sparrow-tiny"
  components = ["tiny"]
}
`,
		"plugins/tools/tiny/README.md":                "# tiny\n",
		"plugins/tools/tiny/tiny.go":                  "package tiny\n",
		"plugins/tools/tiny/cmd/sparrow-tiny/main.go": "package main\n\nfunc main() {}\n",
		"plugins/tools/notaplugin/cmd/helper/main.go": "package main\n\nfunc main() {}\n",
		"plugins/tools/wee/plugin.hcl": `plugin "wee" {
  kind       = "tool"
  version    = "0.3.0"
  sdk        = ">= 0.1.0, < 0.2.0"
  runtime    = "wasm"
  entry      = "wee.wasm"
  components = ["wee"]
  tool "wee" {
    risk         = "read-only"
    description  = "A tiny WASM tool."
    input_schema = { type = "object" }
  }
}
`,
		"plugins/tools/wee/cmd/wee/main.go": "package main\n\nfunc main() {}\n",
		"plugins/providers/README.md":       "not a plugin\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDist(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	t.Setenv("GOWORK", "off")
	root := fakeRepo(t)
	out := filepath.Join(t.TempDir(), "dist")
	platform := runtime.GOOS + "/" + runtime.GOARCH
	other := "linux/arm64"
	if platform == other {
		other = "linux/amd64"
	}
	cfg := config{Root: root, Out: out, Platforms: []string{platform, other}, Go: "go", LDFlags: "-s -w", Jobs: 2}

	var stdout bytes.Buffer
	cfg.Stdout = &stdout
	if err := run(context.Background(), cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	pubText, err := os.ReadFile(filepath.Join(out, "sparrow-build-key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := plugintrust.ParsePublicKey(string(pubText))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "public key:  "+pub.String()) {
		t.Errorf("the build key's public key is not printed:\n%s", stdout.String())
	}
	dir := filepath.Join(out, "mirror", "tiny", "1.2.3")
	verify(t, dir, "tiny_1.2.3_manifest.json", pub)
	verify(t, dir, "tiny_1.2.3_SHA256SUMS", pub)
	archive := filepath.Join(dir, plugintrust.ArchiveName("tiny", "1.2.3", platform))
	first, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, plugintrust.ArchiveName("tiny", "1.2.3", other))); err != nil {
		t.Errorf("no %s archive of the gRPC plugin: %v", other, err)
	}

	// The WASM plugin is built once, whatever the platforms, into one
	// "wasm" archive holding the module beside plugin.hcl.
	if n := strings.Count(stdout.String(), "built wee for"); n != 1 || !strings.Contains(stdout.String(), "built wee for wasm") {
		t.Errorf("the WASM plugin was built %d times, want once for wasm:\n%s", n, stdout.String())
	}
	weeDir := filepath.Join(out, "mirror", "wee", "0.3.0")
	verify(t, weeDir, "wee_0.3.0_manifest.json", pub)
	weeArchives, _ := filepath.Glob(filepath.Join(weeDir, "*.tar.gz"))
	if want := filepath.Join(weeDir, plugintrust.ArchiveName("wee", "0.3.0", plugintrust.PlatformWASM)); len(weeArchives) != 1 || weeArchives[0] != want {
		t.Errorf("wee archives %v, want only %s", weeArchives, want)
	}
	if module := archiveFile(t, filepath.Join(weeDir, plugintrust.ArchiveName("wee", "0.3.0", plugintrust.PlatformWASM)), "wee.wasm"); !bytes.HasPrefix(module, []byte("\x00asm")) {
		t.Errorf("wee.wasm in the archive is not a WebAssembly module (%d bytes)", len(module))
	}
	if !strings.Contains(stdout.String(), "2 plugins (1 WASM, built once) × 2 platforms") {
		t.Errorf("the summary does not count the WASM plugin apart:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, ".staging")); !os.IsNotExist(err) {
		t.Errorf("staging left behind: %v", err)
	}

	// Again: the build key is reused and the archive is byte-identical.
	stdout.Reset()
	if err := run(context.Background(), cfg); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if !strings.Contains(stdout.String(), "(reused;") {
		t.Errorf("build key not reused:\n%s", stdout.String())
	}
	if second, _ := os.ReadFile(archive); !bytes.Equal(first, second) {
		t.Error("two builds of the same tree gave different archives")
	}

	// A release key replaces the build key.
	release, err := plugintrust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReleaseKey = filepath.Join(t.TempDir(), "release-key")
	if err := plugintrust.WriteKeyFiles(cfg.ReleaseKey, release); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(context.Background(), cfg); err != nil {
		t.Fatalf("release run: %v", err)
	}
	verify(t, dir, "tiny_1.2.3_manifest.json", release.Public())
	if !strings.Contains(stdout.String(), "the release key "+cfg.ReleaseKey) {
		t.Errorf("output does not name the release key:\n%s", stdout.String())
	}
}

func TestDistFailsOnABrokenBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	t.Setenv("GOWORK", "off")
	root := fakeRepo(t)
	os.WriteFile(filepath.Join(root, "plugins/tools/tiny/cmd/sparrow-tiny/main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644)
	cfg := config{Root: root, Out: t.TempDir(), Platforms: []string{runtime.GOOS + "/" + runtime.GOARCH}, Go: "go", Jobs: 1, Stdout: &bytes.Buffer{}}
	err := run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "build tiny for") || !strings.Contains(err.Error(), "undefined") {
		t.Fatalf("err = %v, want the build failure with the compiler's message", err)
	}
}

// archiveFile returns the content of the file name in a .tar.gz archive.
func archiveFile(t *testing.T, archive, name string) []byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s: %v", archive, name, err)
		}
		if h.Name == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
}

func verify(t *testing.T, dir, name string, key plugintrust.PublicKey) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := os.ReadFile(filepath.Join(dir, name+".sig"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plugintrust.Verify(plugintrust.KeyRing{key}, name, data, sig); err != nil {
		t.Errorf("verify %s: %v", name, err)
	}
}
