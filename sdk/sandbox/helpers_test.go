package sandbox_test

import (
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestDeniedPathArgument(t *testing.T) {
	denied := []string{"/w/secrets", "/w/vendor/lock.json"}
	cases := []struct {
		name    string
		workdir string
		argv    []string
		want    string
	}{
		{"relative argument", "/w", []string{"cat", "secrets/key"}, "secrets/key"},
		{"the denied directory itself", "/w", []string{"ls", "secrets"}, "secrets"},
		{"absolute argument", "/w/src", []string{"cat", "/w/secrets"}, "/w/secrets"},
		{"dot-dot from a subdirectory", "/w/src", []string{"cat", "../secrets/key"}, "../secrets/key"},
		{"inside a shell script", "/w", []string{"sh", "-c", "cat x; cp secrets/key /tmp"}, "secrets/key"},
		{"after an equals sign", "/w", []string{"tool", "--in=vendor/lock.json"}, "vendor/lock.json"},
		{"working directory inside", "/w/secrets/sub", []string{"ls"}, "/w/secrets/sub"},
		{"a sibling sharing a prefix", "/w", []string{"cat", "secrets-public/readme"}, ""},
		{"a file beside a denied file", "/w", []string{"cat", "vendor/modules.txt"}, ""},
		{"the workspace", "/w", []string{"ls", "."}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sandbox.DeniedPathArgument(denied, tc.workdir, tc.argv); got != tc.want {
				t.Errorf("DeniedPathArgument(%q, %q) = %q, want %q", tc.workdir, tc.argv, got, tc.want)
			}
		})
	}
	if got := sandbox.DeniedPathArgument(nil, "/w", []string{"cat", "secrets"}); got != "" {
		t.Errorf("no denied paths: got %q", got)
	}
}
