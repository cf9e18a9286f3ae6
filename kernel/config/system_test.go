package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	keyA = "ed25519:ziYwXhWKQ+9QdsLTEObQ040fXnFCvasLxGIPrRZovBA="
	keyB = "ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
)

// TestSystemPolicyBinds: what /etc/sparrow/policy.hcl requires, a user
// file cannot loosen; what it leaves open, the user may still tighten.
func TestSystemPolicyBinds(t *testing.T) {
	tests := []struct {
		name, user, system string
		want               Policy
	}{
		{
			name:   "system requires, user tries to switch off",
			user:   "policy {\n  locked = false\n  require_signatures = false\n  trusted_keys = [\"" + keyB + "\"]\n}\n",
			system: "policy {\n  locked = true\n  require_signatures = true\n  trusted_keys = [\"" + keyA + "\"]\n}\n",
			want:   Policy{Locked: true, RequireSignatures: true, TrustedKeys: []string{keyA}},
		},
		{
			name:   "system leaves it open, user tightens",
			user:   "policy {\n  locked = true\n  wasm_only_from_data_dir = true\n}\n",
			system: "policy {\n  locked = false\n}\n",
			want:   Policy{Locked: true, WASMOnlyFromDataDir: true},
		},
		{
			name:   "capabilities intersect",
			user:   "policy {\n  max_capabilities {\n    network = true\n    env = [\"PATH\", \"AWS_SECRET_ACCESS_KEY\"]\n  }\n}\n",
			system: "policy {\n  max_capabilities {\n    network = false\n    env = [\"PATH\", \"HOME\"]\n    paths = []\n  }\n}\n",
			want:   Policy{MaxCapabilities: &MaxCapabilities{Network: false, Env: []string{"PATH"}, Paths: []string{}}},
		},
		{
			name:   "system bounds, user silent",
			system: "policy {\n  max_capabilities {\n    env = [\"PATH\"]\n  }\n}\n",
			want:   Policy{MaxCapabilities: &MaxCapabilities{Network: true, Env: []string{"PATH"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := LoadOptions{Workspace: dir, Getenv: envOf(nil), SystemPolicyFile: writeFile(t, dir, "etc/policy.hcl", tt.system)}
			if tt.user != "" {
				opts.UserFile = writeFile(t, dir, "user.hcl", tt.user)
			}
			cfg, diags := Load(opts)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			tt.want.System = opts.SystemPolicyFile
			if d := cmp.Diff(tt.want, cfg.Policy); d != "" {
				t.Errorf("policy (-want +got):\n%s", d)
			}
		})
	}
}

func TestSystemPolicyOriginAndShape(t *testing.T) {
	dir := t.TempDir()
	sys := writeFile(t, dir, "etc/policy.hcl", "policy {\n  locked = true\n}\n")
	cfg, diags := Load(LoadOptions{Workspace: dir, Getenv: envOf(nil), SystemPolicyFile: sys})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if o := cfg.Origins["policy.locked"]; o.Source != SourceSystem || !strings.Contains(o.String(), "policy.hcl:2") {
		t.Errorf("origin %+v", o)
	}

	bad := writeFile(t, dir, "etc/bad.hcl", "model = \"x\"\npolicy {\n  locked = true\n}\n")
	_, diags = Load(LoadOptions{Workspace: dir, Getenv: envOf(nil), SystemPolicyFile: bad})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "only a policy block") && !strings.Contains(diags.Error(), "Only a policy block") {
		t.Errorf("a system file with more than a policy block: %v", diags)
	}

	missing, diags := Load(LoadOptions{Workspace: dir, Getenv: envOf(nil), SystemPolicyFile: dir + "/nope.hcl"})
	if diags.HasErrors() || missing.Policy.System != "" {
		t.Errorf("a missing system file is no policy: %v %+v", diags, missing.Policy)
	}
}
