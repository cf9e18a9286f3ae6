package pluginhost_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
)

const goodManifest = `plugin "docker" {
  kind        = "sandbox"
  version     = "1.4.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  entry       = "bin/sparrow-sandbox-docker"
  components  = ["docker", "docker-rootless"]
  description = "Runs commands in containers."
  capabilities {
    network = true
    paths   = ["/var/run/docker.sock"]
    env     = ["DOCKER_HOST"]
  }
}
`

func TestParseManifest(t *testing.T) {
	m, diags := pluginhost.ParseManifest("/p/docker/plugin.hcl", []byte(goodManifest))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := []string{m.Name, string(m.Kind), m.Version.String(), m.SDKRange, string(m.Runtime), m.Entry, strings.Join(m.Components, ","), m.Description}
	want := []string{"docker", "sandbox", "1.4.0", ">= 0.1.0, < 0.2.0", "grpc", "/p/docker/bin/sparrow-sandbox-docker", "docker,docker-rootless", "Runs commands in containers."}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("manifest (-want +got):\n%s", d)
	}
	if d := cmp.Diff(pluginhost.Capabilities{Network: true, Paths: []string{"/var/run/docker.sock"}, Env: []string{"DOCKER_HOST"}}, m.Capabilities); d != "" {
		t.Errorf("capabilities (-want +got):\n%s", d)
	}
}

func TestParseManifestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // each must appear in the diagnostics
	}{
		{"syntax", "plugin \"x\" {\n  kind = \n}", []string{"plugin.hcl:2,"}},
		{"missing attributes", `plugin "x" {}`, []string{`"kind" is required`, `"version" is required`, `"entry" is required`}},
		{"every problem at once", `plugin "Bad_Name" {
  kind       = "printer"
  version    = "1.0"
  sdk        = "not a range"
  runtime    = "jvm"
  entry      = "../../bin/evil"
  sha256     = "abc"
  components = []
}`, []string{
			`Plugin name "Bad_Name"`,
			"plugin.hcl:2,16-25: Invalid plugin manifest; unknown plugin kind \"printer\"",
			"plugin.hcl:3,16-21", "not a semantic version",
			"plugin.hcl:4,16-29", "plugin.hcl:5,16-21", `Runtime "jvm"`,
			"plugin.hcl:6,16-32", "inside the plugin directory",
			"plugin.hcl:7,16-21", "64 hexadecimal digits",
			"at least one component",
		}},
		{"unknown attribute", `plugin "x" {
  kind = "tool"
  version = "1.0.0"
  sdk = ">= 0.1"
  entry = "x"
  components = ["x"]
  colour = "blue"
}`, []string{"plugin.hcl:7,3-9", `no "colour" attribute`}},
		{"duplicate component", `plugin "x" {
  kind = "tool"
  version = "1.0.0"
  sdk = ">= 0.1"
  entry = "x"
  components = ["x", "x"]
}`, []string{`Component "x" is empty or listed twice`}},
		{"bad env name", `plugin "x" {
  kind = "tool"
  version = "1.0.0"
  sdk = ">= 0.1"
  entry = "x"
  components = ["x"]
  capabilities { env = ["OK", "NOT OK"] }
}`, []string{`"NOT OK" is not an environment variable name`}},
		{"relative path", `plugin "x" {
  kind = "tool"
  version = "1.0.0"
  sdk = ">= 0.1"
  entry = "x"
  components = ["x"]
  capabilities { paths = ["/etc/x", "~/.config/x", "data"] }
}`, []string{`capabilities.paths: "data" is neither absolute nor below the home directory`}},
		{"provider asks for the workspace", `plugin "x" {
  kind = "provider"
  version = "1.0.0"
  sdk = ">= 0.1"
  entry = "x"
  components = ["x"]
  capabilities { workspace = true }
}`, []string{"a provider plugin never gets the workspace"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertRefused(t, tc.src, tc.want)
		})
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	manifest := func(name, version string) string {
		return `plugin "` + name + `" {
  kind = "tool"
  version = "` + version + `"
  sdk = ">= 0.1"
  entry = "bin"
  components = ["` + name + `"]
}`
	}
	put := func(path, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first, second := filepath.Join(root, "first"), filepath.Join(root, "second")
	put(filepath.Join(first, "fs", "plugin.hcl"), manifest("fs", "1.0.0"))
	// Installed layout: one directory per version; the highest wins.
	put(filepath.Join(first, "grep", "0.9.0", "plugin.hcl"), manifest("grep", "0.9.0"))
	put(filepath.Join(first, "grep", "0.10.0", "plugin.hcl"), manifest("grep", "0.10.0"))
	put(filepath.Join(first, "broken", "plugin.hcl"), `plugin "broken" {`)
	// A later directory cannot shadow an earlier one.
	put(filepath.Join(second, "fs", "plugin.hcl"), manifest("fs", "9.9.9"))
	put(filepath.Join(second, "web", "plugin.hcl"), manifest("web", "2.0.0"))
	// A directory that is itself a plugin directory.
	single := filepath.Join(root, "single")
	put(filepath.Join(single, "plugin.hcl"), manifest("solo", "0.1.0"))

	ms, diags := pluginhost.Discover([]string{first, filepath.Join(root, "missing"), second, single})
	var got []string
	for _, m := range ms {
		got = append(got, m.Name+"@"+m.Version.String())
	}
	if d := cmp.Diff([]string{"fs@1.0.0", "grep@0.10.0", "solo@0.1.0", "web@2.0.0"}, got); d != "" {
		t.Errorf("discovered (-want +got):\n%s", d)
	}
	if !diags.HasErrors() || !strings.Contains(diags.Error(), filepath.Join("broken", "plugin.hcl")) {
		t.Errorf("broken manifest not reported: %v", diags)
	}
}

// assertRefused parses src as a manifest and checks that it is refused
// with diagnostics containing each of want.
func assertRefused(t *testing.T, src string, want []string) {
	t.Helper()
	m, diags := pluginhost.ParseManifest("/p/x/plugin.hcl", []byte(src))
	if !diags.HasErrors() || m != nil {
		t.Fatalf("accepted: %+v", m)
	}
	var all []string
	for _, d := range diags {
		all = append(all, d.Error())
	}
	text := strings.Join(all, "\n")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("diagnostics lack %q:\n%s", w, text)
		}
	}
}
