package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/kernel"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// The test binary doubles as a sandbox plugin whose component declares a
// config schema and echoes back what it was configured with.
func TestMain(m *testing.M) {
	switch os.Getenv("KERNEL_TEST_PLUGIN") {
	case "1":
		sandbox.Serve(&confSandbox{})
		return
	case "tool":
		var tools []tool.Tool
		for i := range secretTools {
			tools = append(tools, &secretTool{name: fmt.Sprintf("secret_%d", i)})
		}
		tool.Serve(tools...)
		return
	}
	os.Exit(m.Run())
}

type confSandbox struct{ got plugin.Config }

func (*confSandbox) Name() string { return "conf" }
func (*confSandbox) ConfigSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "image", Type: plugin.String, Required: true},
		{Name: "timeout", Type: plugin.Duration, Default: "30s"},
		{Name: "api_key", Type: plugin.String, Sensitive: true},
		{Name: "mounts", Type: plugin.ListOfString},
	}}
}
func (s *confSandbox) Configure(_ context.Context, c plugin.Config) error {
	s.got = c
	return nil
}
func (*confSandbox) Capabilities(context.Context) (sandbox.Capabilities, error) {
	return sandbox.Capabilities{Available: true}, nil
}
func (*confSandbox) Prepare(context.Context, sandbox.PrepareRequest) (sandbox.Session, error) {
	return sandbox.Session{}, nil
}
func (s *confSandbox) Exec(_ context.Context, _ sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	fmt.Fprintf(io.Stdout, "%s|%s", s.got.Values, s.got.Workspace)
	return sandbox.Exit{}, nil
}
func (*confSandbox) Teardown(context.Context, string) (sandbox.Released, error) {
	return sandbox.Released{}, nil
}

// setup lays out a plugin directory and a user config, returning kernel
// options for them.
func setup(t *testing.T, userConfig string) kernel.Options {
	t.Helper()
	root := t.TempDir()
	pdir := filepath.Join(root, "plugins", "conf")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	if err := os.Symlink(self, filepath.Join(pdir, "entry")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(pdir, "plugin.hcl"), `plugin "conf" {
  kind       = "sandbox"
  version    = "1.2.3"
  sdk        = ">= 0.1.0"
  entry      = "entry"
  components = ["conf"]
  capabilities { env = ["KERNEL_TEST_PLUGIN"] }
}
`)
	cfg := filepath.Join(root, "user.hcl")
	write(t, cfg, userConfig)
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	env := map[string]string{"HOME": root, "KERNEL_TEST_PLUGIN": "1", "MY_KEY": "s3cret"}
	return kernel.Options{
		Workspace:  ws,
		UserFile:   cfg,
		Getenv:     func(k string) string { return env[k] },
		LookupEnv:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		PluginDirs: []string{filepath.Join(root, "plugins")},
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestComponentConfiguredFromHCL(t *testing.T) {
	opts := setup(t, `sandbox "conf" {
  image   = "debian:12"
  api_key = env("MY_KEY")
  mounts  = ["/data"]
}
`)
	k, diags := kernel.Open(opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	defer k.Close()
	sb, err := k.Sandbox(context.Background(), "conf")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"x"}}, sandbox.IO{Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	values, ws, _ := strings.Cut(out.String(), "|")
	var got map[string]any
	if err := json.Unmarshal([]byte(values), &got); err != nil {
		t.Fatalf("%v: %s", err, values)
	}
	want := map[string]any{"image": "debian:12", "timeout": "30s", "api_key": "s3cret", "mounts": []any{"/data"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("configured with %v, want %v", got, want)
	}
	if ws != opts.Workspace {
		t.Fatalf("workspace %q, want %q", ws, opts.Workspace)
	}
	// config show masks what the plugin declared sensitive.
	var show strings.Builder
	if err := k.Config.Show(&show); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(show.String(), "s3cret") {
		t.Fatalf("config show leaked a secret:\n%s", show.String())
	}
}

func TestComponentConfigErrorsNameFileAndLine(t *testing.T) {
	opts := setup(t, `sandbox "conf" {
  imgae   = "debian:12"
  timeout = "soon"
}
`)
	k, diags := kernel.Open(opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	defer k.Close()
	_, err := k.Sandbox(context.Background(), "conf")
	var de *kernel.DiagnosticsError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want config diagnostics", err)
	}
	text := err.Error()
	for _, want := range []string{"user.hcl:2,3", `Did you mean "image"`, "user.hcl:3,", "image"} {
		if !strings.Contains(text, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, text)
		}
	}
	if len(de.Diags) < 3 {
		t.Errorf("want every problem in one pass (unknown attr, bad duration, missing image), got %d:\n%s", len(de.Diags), text)
	}
}

func TestPluginVersionConstraintAndDisable(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{`plugin "conf" { version = ">= 2.0" }`, `needs plugin conf, which is unavailable: version 1.2.3 does not satisfy ">= 2.0"`},
		{`plugin "conf" { enabled = false }`, "needs plugin conf, which is unavailable: disabled by"},
	} {
		k, diags := kernel.Open(setup(t, tc.block+"\nsandbox \"conf\" { image = \"x\" }\n"))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		_, err := k.Sandbox(context.Background(), "conf")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v", tc.block, err)
		}
		k.Close()
	}
}

func TestUnknownSandboxListsAvailable(t *testing.T) {
	k, diags := kernel.Open(setup(t, ""))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	defer k.Close()
	_, err := k.Sandbox(context.Background(), "dokcer")
	if err == nil || !strings.Contains(err.Error(), `no plugin serves sandbox "dokcer"; available: conf`) {
		t.Fatalf("err = %v", err)
	}
}
