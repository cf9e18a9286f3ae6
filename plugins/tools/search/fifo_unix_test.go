//go:build unix

package search

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace/workspacetest"
)

func TestGrepSpecialFiles(t *testing.T) {
	ws := workspacetest.Tree(t, map[string]string{"a.txt": "a\n", ".git/config": "a\n"})
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	// A FIFO would block a reader forever: named, it is refused; in a
	// directory, it is never opened.
	mustFail(t, Grep, ws, workspacetest.Args("pattern", "x", "path", "pipe"), "pipe is not a regular file")
	if got := mustOK(t, Grep, ws, workspacetest.Args("pattern", "a")); got != "a.txt:1:a\n" {
		t.Errorf("grep: %q", got)
	}
	mustFail(t, Grep, ws, workspacetest.Args("pattern", "a", "path", ".git"), "inside .git")
}
