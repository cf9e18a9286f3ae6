package plugintrust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeysRoundTrip(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key")
	if err := WriteKeyFiles(path, k); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFiles(path, k); err == nil {
		t.Error("overwrote an existing signing key")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	back, err := ReadPrivateKey(path)
	if err != nil || !back.Public().Equal(k.Public()) {
		t.Fatalf("read back %v %v", back.Public(), err)
	}
	pub, _ := os.ReadFile(path + ".pub")
	parsed, err := ParsePublicKey(string(pub))
	if err != nil || !parsed.Equal(k.Public()) || len(parsed.Fingerprint()) != 32 {
		t.Fatalf("public key file: %v %v", parsed, err)
	}
	for _, bad := range []string{"", "rsa:AAAA", "ed25519:not-base64!", "ed25519:AAAA"} {
		if _, err := ParsePublicKey(bad); err == nil {
			t.Errorf("ParsePublicKey(%q) accepted", bad)
		}
	}
	os.WriteFile(path+"2", []byte("# comment\ned25519-private:AAAA\n"), 0o600)
	if _, err := ReadPrivateKey(path + "2"); err == nil || !strings.Contains(err.Error(), "key2:2") {
		t.Errorf("a short seed: %v (want file:line)", err)
	}
}

func TestVerify(t *testing.T) {
	pub, _ := GenerateKey()
	other, _ := GenerateKey()
	data := []byte("release manifest")
	sig := Sign(pub, data)
	ring := KeyRing{pub.Public()}

	if k, err := Verify(ring, "m.json", data, sig); err != nil || !k.Equal(pub.Public()) {
		t.Fatalf("valid signature refused: %v", err)
	}
	_, err := Verify(ring, "m.json", []byte("release manifesT"), sig)
	if _, ok := err.(*BadSignatureError); !ok {
		t.Errorf("altered data: %v", err)
	}
	k, err := Verify(KeyRing{other.Public()}, "m.json", data, sig)
	if ue, ok := err.(*UntrustedKeyError); !ok || !ue.Key.Equal(pub.Public()) || !k.Equal(pub.Public()) ||
		!strings.Contains(err.Error(), pub.Public().Fingerprint()) {
		t.Errorf("untrusted signer: %v", err)
	}
	// A signature naming a trusted key but made by another is bad, not trusted.
	forged := []byte(pub.Public().String() + " " + strings.Fields(string(Sign(other, data)))[1] + "\n")
	if _, err := Verify(ring, "m.json", data, forged); err == nil {
		t.Error("a signature by another key under a trusted key's name was accepted")
	}
	for _, bad := range []string{"", "one-field", "ed25519:AAAA sig", pub.Public().String() + " !!!"} {
		if _, err := Verify(ring, "m.json", data, []byte(bad)); err == nil || !strings.Contains(err.Error(), "m.json.sig") {
			t.Errorf("signature file %q: %v", bad, err)
		}
	}
}

func TestSums(t *testing.T) {
	h := strings.Repeat("a", 64)
	s := Sums{"b.tar.gz": h, "a_manifest.json": h}
	text := string(s.Marshal())
	if text != h+"  a_manifest.json\n"+h+"  b.tar.gz\n" {
		t.Fatalf("marshal:\n%s", text)
	}
	back, err := ParseSums("SUMS", []byte(text))
	if err != nil || len(back) != 2 || back["b.tar.gz"] != h {
		t.Fatalf("parse: %v %v", back, err)
	}
	for _, bad := range []string{h + " one-space\n", "xyz  a\n", h + "  dir/a\n", h + "  a\n" + h + "  a\n"} {
		if _, err := ParseSums("SUMS", []byte(bad)); err == nil || !strings.Contains(err.Error(), "SUMS:") {
			t.Errorf("ParseSums(%q): %v", bad, err)
		}
	}
}

func TestReleaseValidation(t *testing.T) {
	h := strings.Repeat("c", 64)
	good := func() *Release {
		return &Release{Format: 1, Name: "hello-tool", Version: "0.2.0", Kind: "tool", Protocol: 1, SDK: ">= 0.1.0, < 0.2.0",
			Runtime: "grpc", Entry: "hello-tool", Platforms: map[string]*Platform{"linux/amd64": {
				Archive: ArchiveName("hello-tool", "0.2.0", "linux/amd64"), ArchiveSHA256: h,
				Files: map[string]string{"hello-tool": h, "plugin.hcl": h}}}}
	}
	data := good().Marshal()
	if !strings.Contains(string(data), `">= 0.1.0, < 0.2.0"`) {
		t.Errorf("the SDK range is escaped:\n%s", data)
	}
	if _, err := ParseRelease("m.json", data); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		edit func(r *Release)
		want string
	}{
		"format":        {func(r *Release) { r.Format = 2 }, "format:"},
		"name":          {func(r *Release) { r.Name = "Hello" }, "name:"},
		"version":       {func(r *Release) { r.Version = "v1" }, "version:"},
		"kind":          {func(r *Release) { r.Kind = "daemon" }, "kind:"},
		"entry escapes": {func(r *Release) { r.Entry = "../x" }, "entry:"},
		"archive name":  {func(r *Release) { r.Platforms["linux/amd64"].Archive = "x.tar.gz" }, "platforms.linux/amd64.archive"},
		"entry missing": {func(r *Release) { delete(r.Platforms["linux/amd64"].Files, "hello-tool") }, "the entry"},
		"file escapes":  {func(r *Release) { r.Platforms["linux/amd64"].Files["/etc/passwd"] = h }, "/etc/passwd"},
		"wasm mismatch": {func(r *Release) { r.Runtime = "wasm" }, "does not fit runtime"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := good()
			c.edit(r)
			if _, err := ParseRelease("m.json", r.Marshal()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
	if _, err := ParseRelease("m.json", []byte("{\n  \"format\": 1,\n  \"name\": }")); err == nil || !strings.Contains(err.Error(), "m.json: line 3") {
		t.Errorf("syntax error: %v", err)
	}
	if _, err := ParseRelease("m.json", data[:len(data)/2]); err == nil || !strings.Contains(err.Error(), "m.json") {
		t.Errorf("truncated: %v", err)
	}
}
