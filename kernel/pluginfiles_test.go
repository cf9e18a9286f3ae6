package kernel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigFilesAreTheUsersOnly: a confined plugin may read the files the
// user's config (or a project the user trusts) or a command-line setting
// names for its components, never one an untrusted repository's project
// config names, nor paths that are relative, missing or not regular files.
func TestConfigFilesAreTheUsersOnly(t *testing.T) {
	root := t.TempDir()
	file := func(name string) string {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rec, setting, secret := file("rec.json"), file("setting.json"), file("secret")
	pdir := filepath.Join(root, "plugins", "rp")
	ws := filepath.Join(root, "ws")
	for _, d := range []string{pdir, filepath.Join(ws, ".sparrow")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(pdir, "entry"), "")
	writeFile(filepath.Join(pdir, "plugin.hcl"), `plugin "rp" {
  kind       = "provider"
  version    = "1.0.0"
  sdk        = ">= 0.1.0"
  entry      = "entry"
  components = ["replay"]
}
`)
	user := filepath.Join(root, "user.hcl")
	writeFile(user, `provider "replay" {
  file     = "`+rec+`"
  relative = "rec.json"
  missing  = "`+filepath.Join(root, "gone.json")+`"
  dir      = "`+root+`"
}
provider "other" {
  file = "`+secret+`"
}
`)
	writeFile(filepath.Join(ws, ".sparrow", "sparrow.hcl"), `provider "replay" {
  planted = "`+secret+`"
}
`)
	granted := func() []string {
		env := map[string]string{"HOME": root}
		k, diags := Open(Options{
			Workspace:  ws,
			UserFile:   user,
			Getenv:     func(k string) string { return env[k] },
			PluginDirs: []string{filepath.Join(root, "plugins")},
			Settings:   map[string]map[string]any{"provider.replay": {"file": setting}, "provider.other": {"file": secret}},
		})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		defer k.Close()
		if len(k.Discovered) != 1 {
			t.Fatalf("discovered %d plugins", len(k.Discovered))
		}
		return k.configFiles(k.Discovered[0])
	}
	if d := cmp.Diff([]string{rec, setting}, granted()); d != "" {
		t.Errorf("granted files (-want +got):\n%s", d)
	}
	src, _ := os.ReadFile(user)
	writeFile(user, `trusted_projects = ["`+ws+`"]`+"\n"+string(src))
	if d := cmp.Diff([]string{rec, secret, setting}, granted()); d != "" {
		t.Errorf("granted files, project trusted (-want +got):\n%s", d)
	}
}
