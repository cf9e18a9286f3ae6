package workspace

import (
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func TestIgnoreRules(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{
		".gitignore":                "# build output\n*.log\n/bin/\nbuild/\n!keep.log\ndocs/**/*.tmp\nsecret\\ name \nspace\\ \n[!a]x.o\n",
		"sub/.gitignore":            "local.txt\n!important.log\n/anchored.txt\n",
		"sub/deeper/.gitignore":     "!local.txt\n",
		".git/info/exclude":         "excluded-by-git.txt\n",
		".git/HEAD":                 "ref: refs/heads/main\n",
		"placeholder-for-tree.txt":  "",
		"sub/deeper/placeholder.go": "",
	})
	ig := newIgnorer(ws)
	cases := []struct {
		rel     string
		dir     bool
		ignored bool
	}{
		{"a.log", false, true},
		{"sub/deep/a.log", false, true},
		{"keep.log", false, false},
		{"sub/keep.log", false, false},
		{"sub/important.log", false, false}, // re-included below sub
		{"bin", true, true},
		{"bin", false, false}, // dir-only pattern
		{"sub/bin", true, false},
		{"build", true, true},
		{"sub/build", true, true}, // unanchored dir pattern: any depth
		{"docs/a/b/c.tmp", false, true},
		{"docs/c.tmp", false, true},
		{"other/c.tmp", false, false},
		{"sub/local.txt", false, true},
		{"local.txt", false, false},
		{"sub/x/local.txt", false, true},
		{"sub/deeper/local.txt", false, false}, // the deeper file wins
		{"sub/anchored.txt", false, true},
		{"sub/x/anchored.txt", false, false},
		{"secret name", false, true},
		{"space ", false, true},
		{"bx.o", false, true},
		{"ax.o", false, false},
		{"excluded-by-git.txt", false, true},
		{".git", true, true},
		{"sub/.git", false, true},
		{"main.go", false, false},
	}
	for _, tc := range cases {
		if got := ig.ignored(tc.rel, tc.dir); got != tc.ignored {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tc.rel, tc.dir, got, tc.ignored)
		}
	}
	if !ig.ignoredPath("build/sub/x.go", false) || ig.ignoredPath("sub/deeper/local.txt", false) {
		t.Error("ignoredPath should look at the parents")
	}
}

func TestParseIgnoreSkipsBadLines(t *testing.T) {
	f := parseIgnore("\n# comment\n   \n!\n/\n[\nok\n")
	if len(f) != 1 || f[0].segs[1] != "ok" {
		t.Errorf("got %+v", f)
	}
}
