package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvePaths(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Paths
	}{
		{
			name: "home fallbacks",
			env:  map[string]string{"HOME": "/home/me"},
			want: Paths{
				UserFile: "/home/me/.config/sparrow/sparrow.hcl",
				DataDir:  "/home/me/.local/share/sparrow",
				StateDir: "/home/me/.local/state/sparrow",
				CacheDir: "/home/me/.cache/sparrow",
			},
		},
		{
			name: "xdg variables",
			env: map[string]string{
				"HOME": "/home/me", "XDG_CONFIG_HOME": "/x/config", "XDG_DATA_HOME": "/x/data",
				"XDG_STATE_HOME": "/x/state", "XDG_CACHE_HOME": "/x/cache",
			},
			want: Paths{
				UserFile: "/x/config/sparrow/sparrow.hcl",
				DataDir:  "/x/data/sparrow",
				StateDir: "/x/state/sparrow",
				CacheDir: "/x/cache/sparrow",
			},
		},
		{
			name: "SPARROW_CONFIG overrides the user file; relative XDG is ignored",
			env:  map[string]string{"HOME": "/home/me", "SPARROW_CONFIG": "/etc/sparrow.hcl", "XDG_CACHE_HOME": "rel/cache"},
			want: Paths{
				UserFile: "/etc/sparrow.hcl",
				DataDir:  "/home/me/.local/share/sparrow",
				StateDir: "/home/me/.local/state/sparrow",
				CacheDir: "/home/me/.cache/sparrow",
			},
		},
		{
			name: "no HOME and no XDG",
			env:  map[string]string{},
			want: Paths{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ResolvePaths("", envOf(tt.env))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ResolvePaths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindProjectFile(t *testing.T) {
	root := t.TempDir()
	outer := writeFile(t, root, ".sparrow/sparrow.hcl", "")
	writeFile(t, root, "repo/.git/HEAD", "ref: refs/heads/main\n")
	writeFile(t, root, "repo/a/b/keep", "")
	inRepo := writeFile(t, root, "other/.sparrow/sparrow.hcl", "")
	writeFile(t, root, "other/.git/HEAD", "")
	writeFile(t, root, "other/src/pkg/keep", "")
	writeFile(t, root, "plain/sub/keep", "")

	tests := []struct {
		name, from, want string
	}{
		{"stops at the git root", "repo/a/b", ""},
		{"found at the git root", "other/src/pkg", inRepo},
		{"walks up outside a repository", "plain/sub", outer},
		{"in the project directory itself", ".", outer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FindProjectFile(filepath.Join(root, tt.from))
			if got != tt.want {
				t.Errorf("FindProjectFile(%s) = %q, want %q", tt.from, got, tt.want)
			}
		})
	}

	p := ResolvePaths(filepath.Join(root, "other/src"), envOf(nil))
	if p.ProjectFile != inRepo || p.ProjectDir != filepath.Join(root, "other") {
		t.Errorf("ResolvePaths project = %q in %q", p.ProjectFile, p.ProjectDir)
	}
}
