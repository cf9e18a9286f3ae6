package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintBackendsShowsProtectionsUnderTheirBackend(t *testing.T) {
	rows := []backendRow{
		{Name: "local", Plugin: "local", Available: true, Configured: true, PersistentWorkspace: true, Protections: []string{}},
		{Name: "local-hardened", Plugin: "local-hardened", Available: true, NetworkControl: true, FilesystemIsolation: true,
			ResourceLimits: true, Protections: []string{"user namespace", "landlock ABI 7", "seccomp filter"}},
		{Name: "modal", Plugin: "modal-sandbox", Reason: "no modal CLI"},
	}
	var b strings.Builder
	printBackends(&b, rows)
	want := []string{
		"SANDBOX         PLUGIN          AVAILABLE  NETWORK-CONTROL  FS-ISOLATION  LIMITS  PERSISTENT  REMOTE",
		"local *         local           yes        no               no            no      yes         no",
		"local-hardened  local-hardened  yes        yes              yes           yes     no          no",
		"    protections: user namespace; landlock ABI 7; seccomp filter",
		"modal           modal-sandbox   no         no               no            no      no          no",
		"",
	}
	if d := cmp.Diff(want, strings.Split(b.String(), "\n")); d != "" {
		t.Errorf("sandbox list (-want +got):\n%s", d)
	}
}
