// Package fs is Sparrow's workspace file tools. Every path is
// workspace-relative (an absolute path must lie inside the workspace) and
// is resolved with symlinks followed; nothing outside the workspace is
// read or written, whatever the kernel's gate already checked.
package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Tools returns every file tool.
func Tools() []tool.Tool {
	return []tool.Tool{readFile{}, writeFile{}, editFile{}, listDir{}, globTool{}, grepTool{}}
}

// resolve returns the absolute path of p inside workspace, or an error the
// model can act on.
func resolve(workspace, p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, p)
	}
	abs = filepath.Clean(abs)
	// Follow the symlinks of the longest existing prefix.
	real, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(real)
		if parent == real {
			break
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = parent
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the workspace", p)
	}
	return real, nil
}

// relTo is p relative to the workspace, for messages and metadata.
func relTo(workspace, abs string) string {
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		root = workspace
	}
	if rel, err := filepath.Rel(root, abs); err == nil {
		return filepath.ToSlash(rel)
	}
	return abs
}

// isBinary sniffs the first 8 KiB for a NUL byte.
func isBinary(b []byte) bool {
	if len(b) > 8<<10 {
		b = b[:8<<10]
	}
	return strings.IndexByte(string(b), 0) >= 0
}

// atomicWrite writes data via a temp file in the same directory, keeping
// an existing file's mode.
func atomicWrite(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".sparrow-write-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
