package pluginpkg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

func newKey(t *testing.T) plugintrust.PrivateKey {
	t.Helper()
	k, err := plugintrust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// verifyRelease checks both signatures of hello 0.2.0 in dir against ring
// and returns the signer.
func verifyRelease(t *testing.T, dir string, ring plugintrust.KeyRing) (plugintrust.PublicKey, error) {
	t.Helper()
	var signer plugintrust.PublicKey
	for _, name := range []string{"hello_0.2.0_manifest.json", "hello_0.2.0_SHA256SUMS"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sig, err := os.ReadFile(filepath.Join(dir, name+".sig"))
		if err != nil {
			return signer, err
		}
		k, err := plugintrust.Verify(ring, name, data, sig)
		if err != nil {
			return k, err
		}
		signer = k
	}
	return signer, nil
}

func TestPackageSignsAndVerifies(t *testing.T) {
	key := newKey(t)
	src, mirror := helloSource(t), t.TempDir()
	res := mustPackage(t, src, mirror, Options{Key: &key})
	if res.Signer == nil || !res.Signer.Equal(key.Public()) {
		t.Errorf("Signer = %v, want %v", res.Signer, key.Public())
	}
	signer, err := verifyRelease(t, res.Dir, plugintrust.KeyRing{key.Public()})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !signer.Equal(key.Public()) {
		t.Errorf("signed by %s, want %s", signer, key.Public())
	}

	// Another verifier who does not trust the key learns who signed.
	var ue *plugintrust.UntrustedKeyError
	if _, err := verifyRelease(t, res.Dir, plugintrust.KeyRing{newKey(t).Public()}); !errors.As(err, &ue) || !ue.Key.Equal(key.Public()) {
		t.Errorf("err = %v, want UntrustedKeyError naming the signer", err)
	}

	// A manifest altered after signing no longer verifies.
	mpath := filepath.Join(res.Dir, "hello_0.2.0_manifest.json")
	data, _ := os.ReadFile(mpath)
	os.WriteFile(mpath, []byte(strings.Replace(string(data), `"network": true`, `"network": false`, 1)), 0o644)
	var be *plugintrust.BadSignatureError
	if _, err := verifyRelease(t, res.Dir, plugintrust.KeyRing{key.Public()}); !errors.As(err, &be) {
		t.Errorf("err = %v, want BadSignatureError", err)
	}
}

func TestSignLater(t *testing.T) {
	src, mirror := helloSource(t), t.TempDir()
	res := mustPackage(t, src, mirror, Options{})
	if _, err := os.Stat(filepath.Join(res.Dir, "hello_0.2.0_manifest.json.sig")); err == nil {
		t.Fatal("unsigned packaging wrote a signature")
	}
	key := newKey(t)
	rel, err := Sign(res.Dir, key)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if rel.Name != "hello" || rel.Version != "0.2.0" {
		t.Errorf("Sign returned %s %s", rel.Name, rel.Version)
	}
	if _, err := verifyRelease(t, res.Dir, plugintrust.KeyRing{key.Public()}); err != nil {
		t.Fatalf("Verify: %v", err)
	}

	// Re-signing with a new key (a rotation) replaces both signatures.
	next := newKey(t)
	if _, err := Sign(res.Dir, next); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyRelease(t, res.Dir, plugintrust.KeyRing{next.Public()}); err != nil {
		t.Fatalf("Verify with the new key: %v", err)
	}

	// Packaging the same content again with a key signs the existing release.
	third := newKey(t)
	again := mustPackage(t, src, mirror, Options{Key: &third})
	if !again.Unchanged {
		t.Error("Unchanged = false for identical content")
	}
	if _, err := verifyRelease(t, res.Dir, plugintrust.KeyRing{third.Public()}); err != nil {
		t.Fatalf("Verify after repackaging with a key: %v", err)
	}
}

func TestSignRefusals(t *testing.T) {
	cases := []struct {
		name   string
		mangle func(t *testing.T, dir string)
		want   string
	}{
		{"not a version directory", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "hello_0.2.0_manifest.json"))
		}, "want one NAME_VERSION_manifest.json, found 0"},
		{"archive altered", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "hello_0.2.0_linux_amd64.tar.gz"), []byte("tampered"), 0o644)
		}, "hello_0.2.0_linux_amd64.tar.gz has SHA-256 " + plugintrust.HashBytes([]byte("tampered")) + ", but the manifest says"},
		{"archive missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "hello_0.2.0_darwin_arm64.tar.gz"))
		}, "hello_0.2.0_darwin_arm64.tar.gz is missing"},
		{"manifest altered", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "hello_0.2.0_manifest.json")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), `"network": true`, `"network": false`, 1)), 0o644)
		}, "hello_0.2.0_SHA256SUMS lists hello_0.2.0_manifest.json with"},
		{"extra file in SHA256SUMS", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "hello_0.2.0_SHA256SUMS")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, append(data, []byte(strings.Repeat("a", 64)+"  evil.tar.gz\n")...), 0o644)
		}, "lists evil.tar.gz, which the manifest does not"},
		{"invalid manifest", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "hello_0.2.0_manifest.json"), []byte(`{"format": 1,`), 0o644)
		}, "hello_0.2.0_manifest.json: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPackage(t, helloSource(t), t.TempDir(), Options{})
			tc.mangle(t, res.Dir)
			_, err := Sign(res.Dir, newKey(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if matches, _ := filepath.Glob(filepath.Join(res.Dir, "*.sig")); len(matches) > 0 {
				t.Errorf("signatures written despite the refusal: %v", matches)
			}
		})
	}
	if _, err := Sign(filepath.Join(t.TempDir(), "nope"), newKey(t)); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing directory: err = %v", err)
	}
}
