package kernel_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModuleBoundaries holds the architecture: plugins and the SDK never
// import the kernel, and the kernel never imports a plugin.
func TestModuleBoundaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	cases := []struct {
		dir       string
		forbidden string
	}{
		{"../sdk", "github.com/sparrow-cli/sparrow/kernel"},
		{"../plugins", "github.com/sparrow-cli/sparrow/kernel"},
		{"../sdk", "github.com/sparrow-cli/sparrow/plugins"},
		{".", "github.com/sparrow-cli/sparrow/plugins"},
	}
	for _, tc := range cases {
		cmd := exec.Command("go", "list", "-deps", "-test", "./...")
		cmd.Dir = tc.dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v", tc.dir, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if strings.HasPrefix(pkg, tc.forbidden) {
				t.Errorf("%s depends on %s", tc.dir, pkg)
			}
		}
	}
}
