package pluginstall

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/pluginpkg"
)

// What the publisher's side (pluginpkg) packages and signs, the installer
// installs: a native plugin from a directory and over HTTP, and a WASM
// plugin on a machine it was not built for.
func TestInstallWhatPluginpkgPublishes(t *testing.T) {
	key := newKey(t)
	mirrorDir := t.TempDir()
	native := writeTree(t, map[string]string{
		"plugin.hcl": `plugin "hello-tool" {
  kind       = "tool"
  version    = "0.2.0"
  sdk        = ">= 0.1.0, < 0.2.0"
  entry      = "hello-tool"
  components = ["hello"]
  capabilities {
    env = ["PATH", "HOME"]
  }
}
`,
		"README.md":               "hello\n",
		"share/greeting.txt":      "hi\n",
		"linux_amd64/hello-tool":  "#!/bin/sh\necho linux\n",
		"darwin_arm64/hello-tool": "#!/bin/sh\necho darwin\n",
	})
	wasm := writeTree(t, map[string]string{
		"plugin.hcl": `plugin "hello-wasm" {
  kind       = "tool"
  version    = "1.0.0"
  sdk        = ">= 0.1.0"
  runtime    = "wasm"
  entry      = "hello.wasm"
  components = ["hello-wasm"]
  tool "hello-wasm" {
    risk         = "read-only"
    description  = "Greets."
    input_schema = { type = "object" }
  }
}
`,
		"hello.wasm": "\x00asm\x01\x00\x00\x00",
	})
	for _, src := range []string{native, wasm} {
		if _, err := pluginpkg.Package(src, mirrorDir, pluginpkg.Options{Key: &key}); err != nil {
			t.Fatalf("package %s: %v", src, err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(mirrorDir)))
	t.Cleanup(srv.Close)
	dirSrc, _ := NewDirSource(mirrorDir)
	httpSrc := httpSource(t, srv.URL)

	for _, src := range []Source{dirSrc, httpSrc} {
		t.Run(src.String(), func(t *testing.T) {
			e := newEnv(t, src, key.Public())
			e.install("hello-tool", "~0.2")
			e.opts.Platform = "freebsd/riscv64"
			r := e.install("hello-wasm", "")
			if r.New != "1.0.0" {
				t.Errorf("hello-wasm: %+v", r)
			}
			found, diags := pluginhost.Discover([]string{filepath.Join(e.data, "plugins")})
			if diags.HasErrors() || len(found) != 2 {
				t.Fatalf("discover: %v, %v", found, diags)
			}
			got, _ := os.ReadFile(filepath.Join(e.data, "plugins", "hello-tool", "0.2.0", "hello-tool"))
			if string(got) != "#!/bin/sh\necho linux\n" {
				t.Errorf("entry %q, want the linux/amd64 build", got)
			}
			lock, _ := lockfile.Read(e.lock)
			if h := lock.Entries["hello-tool"].Hashes; len(h) != 2 || h["darwin/arm64"] == "" {
				t.Errorf("lock hashes %v, want both platforms", h)
			}
			if h := lock.Entries["hello-wasm"].Hashes; len(h) != 1 || h["wasm"] == "" {
				t.Errorf("lock hashes %v, want wasm", h)
			}
			e.opts.Platform = testPlatform
			e.assertIntact()
		})
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
