package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Target is a path argument resolved inside the workspace.
type Target struct {
	// Root is the workspace with its symlinks resolved.
	Root string
	// Abs is the path, the symlinks of its existing part resolved.
	Abs string
	// Rel is Abs relative to Root, slash-separated; "." for the root.
	Rel string
}

// root is the workspace with its symlinks resolved.
func root(workspace string) (string, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return "", fmt.Errorf("the kernel gave no absolute workspace (%q)", workspace)
	}
	r, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	return r, nil
}

// Resolve turns the path argument p into a Target inside the workspace.
// The longest existing prefix of p has its symlinks resolved, so a link
// pointing out of the workspace is caught whether or not the rest exists.
func Resolve(workspace, p string) (Target, error) {
	if p == "" {
		return Target{}, errors.New("path is empty")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return Target{}, errors.New("path contains a NUL byte")
	}
	root, err := root(workspace)
	if err != nil {
		return Target{}, err
	}
	abs := filepath.Clean(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	real, err := evalExisting(root, abs)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %v", p, err)
	}
	rel, ok := within(root, real)
	if !ok {
		if real != abs {
			return Target{}, fmt.Errorf("%s is outside the workspace (it resolves to %s)", p, real)
		}
		return Target{}, fmt.Errorf("%s is outside the workspace", p)
	}
	return Target{Root: root, Abs: real, Rel: rel}, nil
}

// evalExisting resolves the symlinks of the longest existing prefix of abs
// and appends the rest. A dangling symlink on the way is refused: where it
// points cannot be checked until something creates it. One that points
// outside root is resolved to where it points, for Resolve to refuse as
// outside: in a WASM tool every link out of the workspace dangles, since
// the guest sees nothing else.
func evalExisting(root, abs string) (string, error) {
	existing, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if fi, lerr := os.Lstat(existing); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			if dest, err := os.Readlink(existing); err == nil {
				if !filepath.IsAbs(dest) {
					dest = filepath.Join(filepath.Dir(existing), dest)
				}
				if _, in := within(root, filepath.Clean(dest)); !in {
					return filepath.Join(dest, rest), nil
				}
			}
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

// Dir resolves p and checks it is a directory that may be walked: not
// .git or inside it.
func Dir(workspace, p string) (Target, error) {
	t, err := Resolve(workspace, p)
	if err != nil {
		return Target{}, err
	}
	if IsGitPath(t.Rel) {
		return Target{}, fmt.Errorf("%s is inside .git, which Sparrow's file tools do not show", p)
	}
	fi, err := os.Stat(t.Abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Target{}, fmt.Errorf("%s does not exist", p)
	case err != nil:
		return Target{}, fmt.Errorf("cannot read %s: %v", p, err)
	case !fi.IsDir():
		return Target{}, fmt.Errorf("%s is a file, not a directory", p)
	}
	return t, nil
}

// RegularFile checks that t, named p by the model, is an existing regular
// file: directories, FIFOs and devices are refused (reading one could
// block or mislead). A missing file's error wraps os.ErrNotExist.
func RegularFile(t Target, p string) (os.FileInfo, error) {
	fi, err := os.Stat(t.Abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, MissingError(p)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", p, err)
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file", p)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	return fi, nil
}

// MissingError says the path it holds does not exist; it matches
// os.ErrNotExist.
type MissingError string

func (e MissingError) Error() string { return string(e) + " does not exist" }
func (e MissingError) Unwrap() error { return os.ErrNotExist }

// IsDir reports whether p is an existing directory, symlinks followed.
func IsDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// IsGitPath reports whether rel (slash-separated) is .git or inside it.
func IsGitPath(rel string) bool {
	for _, s := range strings.Split(rel, "/") {
		if s == ".git" {
			return true
		}
	}
	return false
}

// RelBelow is rel (workspace-relative) relative to the directory dir
// (workspace-relative, "." for the root).
func RelBelow(dir, rel string) string {
	if dir == "." {
		return rel
	}
	return strings.TrimPrefix(rel, path.Clean(dir)+"/")
}
