package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// Plugins are confined by the sparrow-init installed beside sparrow, and
// by sparrow itself when there is none; either way they start.
func TestConfinedBySparrowInit(t *testing.T) {
	bin := buildSparrow(t)
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + builtPlugins(t)}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	small := filepath.Join(filepath.Dir(bin), "sparrow-init")
	for _, init := range []string{small, bin} {
		if init == bin {
			os.Remove(small)
		}
		out := run("doctor")
		if !regexp.MustCompile(`plugins confined to .*; init ` + regexp.QuoteMeta(init) + `\n`).MatchString(out) {
			t.Fatalf("doctor does not name init %s:\n%s", init, out)
		}
		out = run("plugin", "list", "--check")
		if !regexp.MustCompile(`(?m)^core .*running \(pid [0-9]+`).MatchString(out) {
			t.Fatalf("the core plugin did not start confined by %s:\n%s", init, out)
		}
	}
}
