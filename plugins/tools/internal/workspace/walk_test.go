package workspace

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func TestWalk(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{
		".gitignore":        "build/\n*.log\n",
		".git/HEAD":         "",
		"a.log":             "",
		"build/out.bin":     "",
		"src/main.go":       "",
		"src/deep/lib.go":   "",
		"src/deep/x/y.go":   "",
		"src/sub/.git/HEAD": "",
	})
	workspacetest.Symlink(t, "src", filepath.Join(ws, "link"))
	walk := func(path string, maxDepth int, stopAfter int) []string {
		t.Helper()
		start, err := Dir(ws, path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = Walk(context.Background(), start, maxDepth, func(e Entry) error {
			if len(got) == stopAfter {
				return ErrStop
			}
			name := e.Rel
			if e.IsDir() {
				name += "/"
			}
			got = append(got, name)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	cases := []struct {
		name, path string
		maxDepth   int
		stopAfter  int
		want       []string
	}{
		{"everything, ignored and .git skipped, links not followed", ".", 0, -1,
			[]string{".gitignore", "link", "src/", "src/deep/", "src/deep/lib.go", "src/deep/x/", "src/deep/x/y.go", "src/main.go", "src/sub/"}},
		{"one level", ".", 1, -1, []string{".gitignore", "link", "src/"}},
		{"below a directory", "src", 2, -1, []string{"src/deep/", "src/deep/lib.go", "src/deep/x/", "src/main.go", "src/sub/"}},
		{"an ignored directory named", "build", 0, -1, []string{"build/out.bin"}},
		{"stopped", ".", 0, 2, []string{".gitignore", "link"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, walk(tc.path, tc.maxDepth, tc.stopAfter)); diff != "" {
				t.Errorf("walk (-want +got):\n%s", diff)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start, _ := Dir(ws, ".")
	if err := Walk(ctx, start, 0, func(Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled walk returned %v", err)
	}
}
