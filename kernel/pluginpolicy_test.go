package kernel_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/pluginstall"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// signRelease writes a signed release beside the conf plugin in dir, as
// `sparrow plugin install` leaves it, pinning entryHash.
func signRelease(t *testing.T, dir string, key plugintrust.PrivateKey, entryHash string) {
	t.Helper()
	rel := &plugintrust.Release{Format: 1, Name: "conf", Version: "1.2.3", Kind: "sandbox", Protocol: 1, SDK: ">= 0.1.0",
		Runtime: "grpc", Entry: "entry", Capabilities: plugintrust.Capabilities{Env: []string{"KERNEL_TEST_PLUGIN"}},
		Platforms: map[string]*plugintrust.Platform{kernel.Platform(): {
			Archive: plugintrust.ArchiveName("conf", "1.2.3", kernel.Platform()), ArchiveSHA256: strings.Repeat("0", 64),
			Files: map[string]string{"entry": entryHash, "plugin.hcl": strings.Repeat("1", 64)}}}}
	data := rel.Marshal()
	write(t, filepath.Join(dir, pluginstall.ReleaseFile), string(data))
	write(t, filepath.Join(dir, pluginstall.ReleaseSigFile), string(plugintrust.Sign(key, data)))
}

// install moves the conf plugin of opts into the data directory, where
// installed plugins live, and returns its new directory.
func install(t *testing.T, opts *kernel.Options) string {
	t.Helper()
	root := filepath.Dir(opts.UserFile)
	dst := filepath.Join(root, ".local", "share", "sparrow", "plugins", "conf", "1.2.3")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.Rename(filepath.Join(root, "plugins", "conf"), dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func lockConf(t *testing.T, opts kernel.Options, key plugintrust.PrivateKey, hash string) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(opts.UserFile), lockfile.Name)
	f := &lockfile.File{Path: path, Entries: map[string]*lockfile.Entry{"conf": {
		Name: "conf", Version: "1.2.3", Source: "/mirror", Signer: key.Public().String(),
		Fingerprint: key.Public().Fingerprint(), Manifest: strings.Repeat("2", 64),
		Hashes: map[string]string{kernel.Platform(): hash}}}}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPluginPolicy(t *testing.T) {
	self, _ := os.Executable()
	realHash, err := plugintrust.HashFile(self)
	if err != nil {
		t.Fatal(err)
	}
	wrongHash := strings.Repeat("e", 64)
	publisher, _ := plugintrust.GenerateKey()
	stranger, _ := plugintrust.GenerateKey()
	trusted := "trusted_keys = [\"" + publisher.Public().String() + "\"]\n"
	const sb = "sandbox \"conf\" { image = \"x\" }\n"

	tests := []struct {
		name string
		// policy is the user's policy block body; prepare lays out files.
		policy  string
		system  string
		prepare func(t *testing.T, opts *kernel.Options)
		// want is in the error of starting the sandbox; "" means it starts.
		want []string
	}{
		{name: "no policy, unsigned dev plugin", want: nil},
		{name: "require_signatures refuses an unsigned plugin", policy: "require_signatures = true\n" + trusted,
			want: []string{"needs plugin conf, which is unavailable: refused by policy.require_signatures (from ", "user.hcl:", "it is unsigned (a development plugin in "}},
		{name: "require_signatures accepts a release signed by a trusted key", policy: "require_signatures = true\n" + trusted,
			prepare: func(t *testing.T, o *kernel.Options) { signRelease(t, install(t, o), publisher, realHash) }},
		{name: "a signed release pins the entry hash", policy: "require_signatures = true\n" + trusted,
			prepare: func(t *testing.T, o *kernel.Options) { signRelease(t, install(t, o), publisher, wrongHash) },
			want:    []string{"plugin conf", wrongHash, realHash}},
		{name: "a signer that is not trusted", policy: "require_signatures = true\n" + trusted,
			prepare: func(t *testing.T, o *kernel.Options) { signRelease(t, install(t, o), stranger, realHash) },
			want:    []string{"its signer " + stranger.Public().Fingerprint() + " is not in policy.trusted_keys"}},
		{name: "a release altered after signing", policy: "require_signatures = true\n" + trusted,
			prepare: func(t *testing.T, o *kernel.Options) {
				dir := install(t, o)
				signRelease(t, dir, publisher, realHash)
				data, _ := os.ReadFile(filepath.Join(dir, pluginstall.ReleaseFile))
				write(t, filepath.Join(dir, pluginstall.ReleaseFile), strings.Replace(string(data), "KERNEL_TEST_PLUGIN", "KERNEL_TEST_PLUGIX", 1))
			},
			want: []string{"does not match its signature"}},
		{name: "locked refuses a plugin not in the lock", policy: "locked = true\n",
			prepare: func(t *testing.T, o *kernel.Options) { install(t, o) },
			want:    []string{"refused by policy.locked", "it is not in the lock file ", lockfile.Name}},
		{name: "locked refuses a plugin outside the data dir", policy: "locked = true\n",
			prepare: func(t *testing.T, o *kernel.Options) { lockConf(t, *o, publisher, realHash) },
			want:    []string{"refused by policy.locked", "not installed in the data directory"}},
		{name: "locked accepts the locked plugin", policy: "locked = true\n",
			prepare: func(t *testing.T, o *kernel.Options) { install(t, o); lockConf(t, *o, publisher, realHash) }},
		{name: "the lock's hash is checked at every launch, locked or not",
			prepare: func(t *testing.T, o *kernel.Options) { lockConf(t, *o, publisher, wrongHash) },
			want:    []string{"plugin conf", wrongHash, realHash, lockfile.Name}},
		{name: "max_capabilities refuses undeclared env", policy: "max_capabilities {\n  env = [\"PATH\"]\n}\n",
			want: []string{"refused by policy.max_capabilities.env (from ", "user.hcl:4", "it declares env KERNEL_TEST_PLUGIN, beyond what the policy allows"}},
		{name: "the system policy binds over the user's", policy: "require_signatures = false\n",
			system: "policy {\n  require_signatures = true\n}\n",
			want:   []string{"refused by policy.require_signatures (from ", "policy.hcl:2", "it is unsigned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := sb
			if tt.policy != "" {
				cfg += "policy {\n" + tt.policy + "}\n"
			}
			opts := setup(t, cfg)
			if tt.system != "" {
				opts.SystemPolicyFile = filepath.Join(filepath.Dir(opts.UserFile), "etc", "policy.hcl")
				os.MkdirAll(filepath.Dir(opts.SystemPolicyFile), 0o755)
				write(t, opts.SystemPolicyFile, tt.system)
			}
			if tt.prepare != nil {
				tt.prepare(t, &opts)
			}
			k, diags := kernel.Open(opts)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			defer k.Close()
			_, err := k.Sandbox(context.Background(), "conf")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("want the plugin to start: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want a refusal mentioning %q; it started", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}
