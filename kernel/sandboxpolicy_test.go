package kernel

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestCompilePolicy(t *testing.T) {
	var adaHome []string
	for _, rel := range config.DefaultHomeDeniedPaths() {
		adaHome = append(adaHome, "/home/ada/"+rel)
	}
	env := []string{"PATH", "HOME"}
	cases := []struct {
		name string
		home string
		o    SandboxOptions
		caps sandbox.Capabilities
		want sandbox.Policy
	}{
		{"defaults: workspace, home denials, network for a backend that cannot deny it", "/home/ada", SandboxOptions{},
			sandbox.Capabilities{Available: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj"}, DeniedPaths: []string{".git"}, AllowNetwork: true,
				EnvAllowlist: env, DenyRead: adaHome}},
		{"a backend with network control gets none unless asked", "/home/ada/", SandboxOptions{},
			sandbox.Capabilities{Available: true, NetworkControl: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj"}, DeniedPaths: []string{".git"},
				EnvAllowlist: env, DenyRead: adaHome}},
		{"asked for network", "/home/ada", SandboxOptions{AllowNetwork: true},
			sandbox.Capabilities{Available: true, NetworkControl: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj"}, DeniedPaths: []string{".git"}, AllowNetwork: true,
				EnvAllowlist: env, DenyRead: adaHome}},
		{"no HOME: nothing to resolve the home denials against", "", SandboxOptions{},
			sandbox.Capabilities{Available: true, NetworkControl: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj"}, DeniedPaths: []string{".git"}, EnvAllowlist: env}},
		{"a relative HOME is not resolved against the working directory", "home/ada", SandboxOptions{},
			sandbox.Capabilities{Available: true, NetworkControl: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj"}, DeniedPaths: []string{".git"}, EnvAllowlist: env}},
		{"extra and denied paths: relative from the workspace, cleaned, workspace first", "",
			SandboxOptions{
				ExtraRead:  []string{"/opt/sdk/", "../shared"},
				ExtraWrite: []string{"/tmp/cache/./go", "/w/proj"},
				DenyRead:   []string{"secrets", "/w/proj/.aws/../keys"},
				DenyWrite:  []string{"vendor/"},
			},
			sandbox.Capabilities{Available: true, NetworkControl: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj", "/tmp/cache/go"}, ReadOnlyPaths: []string{"/opt/sdk", "/w/shared"},
				DeniedPaths: []string{".git"}, EnvAllowlist: env,
				DenyRead: []string{"/w/proj/secrets", "/w/proj/keys"}, DenyWrite: []string{"/w/proj/vendor"}}},
		{"a denied path given twice is listed once", "/home/ada", SandboxOptions{DenyRead: []string{"/home/ada/.ssh"}},
			sandbox.Capabilities{Available: true, NetworkControl: true},
			sandbox.Policy{ReadWritePaths: []string{"/w/proj"}, DeniedPaths: []string{".git"}, EnvAllowlist: env, DenyRead: adaHome}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := compilePolicy(policyInput{workspace: "/w/proj/", home: tc.home, denied: []string{".git"},
				envAllow: env, options: tc.o, caps: tc.caps})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("policy (-want +got):\n%s", d)
			}
		})
	}
}

func TestCompilePolicyHomeDenials(t *testing.T) {
	p, err := compilePolicy(policyInput{workspace: "/w", home: "/u/bo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/u/bo/.ssh", "/u/bo/.aws", "/u/bo/.config/gh", "/u/bo/.docker/config.json",
		"/u/bo/.netrc", "/u/bo/.bash_history", "/u/bo/.cargo/credentials.toml"} {
		if !slices.Contains(p.DenyRead, want) {
			t.Errorf("DenyRead %v lacks %s", p.DenyRead, want)
		}
	}
	for _, d := range p.DenyRead {
		if strings.HasPrefix(d, "/home/") || strings.HasPrefix(d, "/root/") {
			t.Errorf("home denial %s was not resolved from $HOME", d)
		}
	}
}

func TestCompilePolicyConflicts(t *testing.T) {
	cases := []struct {
		name string
		o    SandboxOptions
		want string
	}{
		{"extra read inside a default home denial", SandboxOptions{ExtraRead: []string{"/home/ada/.aws/config"}},
			"extra read path /home/ada/.aws/config lies inside the denied path /home/ada/.aws"},
		{"extra write inside a denied read path", SandboxOptions{DenyRead: []string{"out"}, ExtraWrite: []string{"out/bin"}},
			"extra write path /w/out/bin lies inside the denied path /w/out"},
		{"extra write that is a denied write path", SandboxOptions{DenyWrite: []string{"/srv"}, ExtraWrite: []string{"/srv"}},
			"extra write path /srv lies inside the denied path /srv"},
		{"empty path", SandboxOptions{DenyWrite: []string{""}}, "deny write path: empty path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compilePolicy(policyInput{workspace: "/w", home: "/home/ada", options: tc.o})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A sibling that only shares a prefix is not inside.
	if _, err := compilePolicy(policyInput{workspace: "/w", home: "/home/ada",
		options: SandboxOptions{ExtraRead: []string{"/home/ada/.sshd-config"}}}); err != nil {
		t.Errorf("a path beside a denied one was refused: %v", err)
	}
}
