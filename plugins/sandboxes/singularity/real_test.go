//go:build linux

package singularity

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// TestRealApptainer runs the backend against a real Apptainer or
// SingularityCE with a real image: what the fake cannot show (masks,
// network namespace, --env-file parsing, --no-eval, exit propagation
// through the starter).
func TestRealApptainer(t *testing.T) {
	image := os.Getenv("SPARROW_SINGULARITY_TEST_IMAGE")
	bin, _ := exec.LookPath("apptainer")
	if bin == "" {
		bin, _ = exec.LookPath("singularity")
	}
	switch {
	case bin == "":
		t.Skip("neither apptainer nor singularity is installed here (Debian 12 packages neither); install Apptainer to run this test")
	case image == "":
		t.Skip("SPARROW_SINGULARITY_TEST_IMAGE is not set: point it at a .sif with sh, cat and env (e.g. apptainer pull debian.sif docker://debian:12-slim)")
	}
	b := New()
	raw, _ := json.Marshal(map[string]any{"image": image, "binary": bin})
	if err := b.Configure(context.Background(), plugin.Config{Values: raw, StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=hunter2\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("visible\n"), 0o644))
	t.Setenv("SPARROW_TEST_SECRET", "hunter3")
	s, err := b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "real", Workspace: ws,
		Policy: sandbox.Policy{DeniedPaths: []string{".env"}, EnvAllowlist: []string{"LANG"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Teardown(context.Background(), s.ID)
	run := func(script string, env map[string]string) (sandbox.Exit, string) {
		var out strings.Builder
		exit, err := b.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", script}, Env: env},
			sandbox.IO{Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatal(err)
		}
		return exit, out.String()
	}
	if exit, out := run("cat a.txt; pwd; exit 7", nil); exit.Code != 7 || out != "visible\n/workspace\n" {
		t.Errorf("workspace: %+v %q", exit, out)
	}
	// The mask is read through a variable, so the argv check cannot see it.
	if _, out := run(`f=.en; cat "${f}v"; echo end`, nil); strings.Contains(out, "hunter2") {
		t.Errorf("the masked .env was readable: %q", out)
	}
	if _, out := run("env", map[string]string{"FROM_REQUEST": "$HOME `x`"}); !strings.Contains(out, "FROM_REQUEST=$HOME `x`") || strings.Contains(out, "hunter3") {
		t.Errorf("environment: %q", out)
	}
	if _, out := run("cat /proc/net/dev", nil); strings.Contains(out, "eth0") {
		t.Errorf("network namespace has a host interface: %q", out)
	}
}
