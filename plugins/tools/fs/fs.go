// Package fs is Sparrow's workspace file tools: read_file, write_file,
// edit_file, list_dir, glob and grep.
//
// Invariants:
//   - Every path is workspace-relative; an absolute path is accepted only
//     when it lies inside the workspace. Paths are resolved with symlinks
//     followed and anything that ends up outside the workspace is refused,
//     whatever the kernel's gate already checked (defence in depth).
//   - A bad argument is an error Result the model can fix (tool.Errorf),
//     never a Go error: a Go error means the plugin itself failed.
//   - Writes are atomic (temp file + fsync + rename in the same directory)
//     and keep an existing file's mode.
//   - Walks skip .git and what .gitignore files ignore.
package fs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Tools returns every file tool, for tool.Serve.
func Tools() []tool.Tool {
	return []tool.Tool{readFile{}, writeFile{}, editFile{}, listDir{}, globTool{}, grepTool{}}
}

// sniffBytes is how much of a file is checked for NUL bytes.
const sniffBytes = 8 << 10

// workspaceRoot is the workspace with its symlinks resolved.
func workspaceRoot(workspace string) (string, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return "", fmt.Errorf("the kernel gave no absolute workspace (%q)", workspace)
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	return root, nil
}

// target is a path argument resolved inside the workspace.
type target struct {
	root string // the workspace, symlinks resolved
	abs  string // the path, symlinks of its existing part resolved
	rel  string // abs relative to root, slash-separated; "." for the root
}

// resolve turns the path argument p into a target inside the workspace.
// The longest existing prefix of p has its symlinks resolved, so a link
// pointing out of the workspace is caught whether or not the rest exists.
// The error is worded for the model.
func resolve(workspace, p string) (target, error) {
	if p == "" {
		return target{}, errors.New("path is empty")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return target{}, errors.New("path contains a NUL byte")
	}
	root, err := workspaceRoot(workspace)
	if err != nil {
		return target{}, err
	}
	abs := filepath.Clean(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	real, err := evalExisting(abs)
	if err != nil {
		return target{}, fmt.Errorf("%s: %v", p, err)
	}
	rel, ok := within(root, real)
	if !ok {
		if real != abs {
			return target{}, fmt.Errorf("%s is outside the workspace (it resolves to %s)", p, real)
		}
		return target{}, fmt.Errorf("%s is outside the workspace", p)
	}
	return target{root: root, abs: real, rel: rel}, nil
}

// evalExisting resolves the symlinks of the longest existing prefix of abs
// and appends the rest. A dangling symlink on the way is refused: where it
// points cannot be checked until something creates it.
func evalExisting(abs string) (string, error) {
	existing, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if fi, lerr := os.Lstat(existing); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symlink to a missing target", existing)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
}

// within reports whether abs lies in root, and abs relative to root.
func within(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// regularFile checks that t is an existing regular file: directories,
// FIFOs and devices are refused (reading one could block or mislead). A
// missing file's error wraps os.ErrNotExist.
func regularFile(t target, p string) (os.FileInfo, error) {
	fi, err := os.Stat(t.abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, missingError(p)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", p, err)
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file", p)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	return fi, nil
}

// missingError says a path does not exist; it matches os.ErrNotExist.
type missingError string

func (e missingError) Error() string { return string(e) + " does not exist" }
func (e missingError) Unwrap() error { return os.ErrNotExist }

// writable refuses targets the mutating tools must not touch: the
// workspace itself and anything in .git (checkpoints live there).
func writable(t target, p string) error {
	switch {
	case t.rel == ".":
		return fmt.Errorf("%s is the workspace itself, not a file", p)
	case isGitPath(t.rel):
		return fmt.Errorf("%s is inside .git, which Sparrow's file tools do not change", p)
	}
	return nil
}

// isBinary reports whether b's first sniffBytes hold a NUL byte.
func isBinary(b []byte) bool {
	if len(b) > sniffBytes {
		b = b[:sniffBytes]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// validText makes s valid UTF-8 for the model (and for protobuf strings),
// replacing invalid bytes with U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// argError is the error Result for a decoding failure.
func argError(err error) tool.Result {
	return tool.Errorf("%v", err)
}

// intArg checks an optional integer argument against [lo, hi], returning
// def when it is absent.
func intArg(name string, v *int, def, lo, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < lo || *v > hi {
		return 0, fmt.Errorf("%s must be %d to %d, got %d", name, lo, hi, *v)
	}
	return *v, nil
}

// schema is a JSON Schema object with the given properties and required
// names, closed to other properties.
func schema(properties string, required ...string) []byte {
	req := "[]"
	if len(required) > 0 {
		req = `["` + strings.Join(required, `","`) + `"]`
	}
	return []byte(`{"type":"object","properties":{` + properties + `},"required":` + req + `,"additionalProperties":false}`)
}
