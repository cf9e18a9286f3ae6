package lockfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

func TestRoundTrip(t *testing.T) {
	k, _ := plugintrust.GenerateKey()
	h := strings.Repeat("ab", 32)
	path := filepath.Join(t.TempDir(), ".sparrow", Name)
	f := &File{Path: path, Entries: map[string]*Entry{
		"zeta": {Name: "zeta", Version: "1.0.0", Source: "/mirror", Signer: k.Public().String(),
			Fingerprint: k.Public().Fingerprint(), Manifest: h, Hashes: map[string]string{"wasm": h}},
		"alpha": {Name: "alpha", Version: "0.2.0", Constraint: "~> 0.2", Source: "https://m.example/x",
			Signer: k.Public().String(), Fingerprint: k.Public().Fingerprint(), Manifest: h,
			Hashes: map[string]string{"linux/amd64": h, "darwin/arm64": h}},
	}}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	if !strings.HasPrefix(text, "# Maintained by") || strings.Index(text, `plugin "alpha"`) > strings.Index(text, `plugin "zeta"`) {
		t.Errorf("want a header and blocks sorted by name:\n%s", text)
	}
	if strings.Index(text, `"darwin/arm64"`) > strings.Index(text, `"linux/amd64"`) {
		t.Errorf("hashes not sorted:\n%s", text)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if got.Hash("alpha", "linux/amd64") != h || got.Hash("alpha", "linux/arm64") != "" || got.Hash("nope", "wasm") != "" {
		t.Error("Hash lookups wrong")
	}
}

func TestMissingIsEmpty(t *testing.T) {
	f, err := Read(filepath.Join(t.TempDir(), Name))
	if err != nil || len(f.Entries) != 0 {
		t.Fatalf("%v %v", f, err)
	}
}

func TestBadInputNamesWhere(t *testing.T) {
	k, _ := plugintrust.GenerateKey()
	h := strings.Repeat("ab", 32)
	cases := map[string]struct{ src, want string }{
		"syntax":  {"plugin \"a\" {\n  version = \n}\n", Name + ":2"},
		"missing": {"plugin \"a\" {\n  version = \"1.0.0\"\n}\n", `Missing required argument`},
		"bad hash": {"plugin \"a\" {\n  version = \"1.0.0\"\n  source = \"/m\"\n  signer = \"" + k.Public().String() +
			"\"\n  manifest = \"" + h + "\"\n  hashes = { \"linux/amd64\" = \"xyz\" }\n}\n", `hashes["linux/amd64"]: not a SHA-256`},
		"bad signer": {"plugin \"a\" {\n  version = \"1.0.0\"\n  source = \"/m\"\n  signer = \"rsa:abc\"\n  manifest = \"" + h +
			"\"\n  hashes = { wasm = \"" + h + "\" }\n}\n", `signer: public key`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), Name)
			os.WriteFile(path, []byte(c.src), 0o644)
			_, err := Read(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), Name) {
				t.Fatalf("error %v, want it to name %s and say %q", err, Name, c.want)
			}
		})
	}
}
