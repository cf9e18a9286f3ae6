package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// secretTools is how many tools each test tool plugin serves.
const secretTools = 8

// secretTool is a tool whose configuration holds a secret.
type secretTool struct{ name string }

func (t *secretTool) Spec() tool.Spec {
	return tool.Spec{Name: t.name, Description: "holds a secret", InputSchema: json.RawMessage(`{"type":"object"}`), Risk: tool.RiskReadOnly}
}
func (*secretTool) Invoke(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{}, nil
}
func (*secretTool) ConfigSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{{Name: "pass_phrase", Type: plugin.String, Sensitive: true}}}
}
func (*secretTool) Configure(context.Context, plugin.Config) error { return nil }

// TestToolPluginsConfiguredInParallel: tool plugins are started and
// configured in parallel, each marking its tools' sensitive attributes;
// under -race this fails if the marks are not serialised, and every
// tool's secret is known to the redactor afterwards.
func TestToolPluginsConfiguredInParallel(t *testing.T) {
	root := t.TempDir()
	self, _ := os.Executable()
	var cfg strings.Builder
	for _, name := range []string{"tools-a", "tools-b", "tools-c"} {
		dir := filepath.Join(root, "plugins", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(self, filepath.Join(dir, "entry")); err != nil {
			t.Fatal(err)
		}
		var comps []string
		for i := range secretTools {
			comps = append(comps, fmt.Sprintf("%q", fmt.Sprintf("secret_%d", i)))
		}
		write(t, filepath.Join(dir, "plugin.hcl"), fmt.Sprintf(`plugin %q {
  kind       = "tool"
  version    = "1.0.0"
  sdk        = ">= 0.1.0"
  entry      = "entry"
  components = [%s]
  capabilities { env = ["KERNEL_TEST_PLUGIN"] }
}
`, name, strings.Join(comps, ", ")))
	}
	for i := range secretTools {
		fmt.Fprintf(&cfg, "tool \"secret_%d\" {\n  pass_phrase = \"phrase-%d-q7\"\n}\n", i, i)
	}
	write(t, filepath.Join(root, "user.hcl"), cfg.String())
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	env := map[string]string{"HOME": root, "KERNEL_TEST_PLUGIN": "tool"}
	k, diags := kernel.Open(kernel.Options{
		Workspace:  ws,
		UserFile:   filepath.Join(root, "user.hcl"),
		Getenv:     func(k string) string { return env[k] },
		LookupEnv:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		PluginDirs: []string{filepath.Join(root, "plugins")},
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	defer k.Close()
	entries, err := k.ToolEntries(context.Background())
	// Three plugins serve the same names: the first found is used, the
	// others are reported; every one was configured.
	if len(entries) != secretTools || err == nil || !strings.Contains(err.Error(), "both serve a tool named secret_0") {
		t.Fatalf("%d tools, err %v", len(entries), err)
	}
	var shown strings.Builder
	if err := k.Config.Show(&shown); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shown.String(), "-q7") {
		t.Errorf("config show reveals a tool's pass phrase:\n%s", shown.String())
	}
}
