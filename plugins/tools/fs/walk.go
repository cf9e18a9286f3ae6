package fs

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// errStop ends a walk early without an error.
var errStop = errors.New("stop walking")

// entry is one thing a walk visits.
type entry struct {
	rel   string // workspace-relative, slash-separated
	abs   string
	depth int // 1 for the start directory's children
	d     fs.DirEntry
}

// walker visits the workspace below a start directory in lexical order,
// skipping .git and what .gitignore files ignore. When the start itself is
// ignored (the model named an ignored directory), its contents are listed
// anyway: only .git stays hidden.
type walker struct {
	root string
	ign  *ignorer
}

func newWalker(root string) *walker {
	return &walker{root: root, ign: newIgnorer(root)}
}

// walk calls fn for every entry below start (a target directory), down to
// maxDepth levels (0: unlimited). fn returning errStop ends the walk
// cleanly; unreadable directories are skipped.
func (w *walker) walk(ctx context.Context, start target, maxDepth int, fn func(entry) error) error {
	honour := !w.ign.ignoredPath(start.rel, true)
	prefix := ""
	if start.rel != "." {
		prefix = start.rel + "/"
	}
	err := filepath.WalkDir(start.abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start.abs {
				return err
			}
			return nil // an unreadable entry is skipped, not fatal
		}
		if p == start.abs {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sub := filepath.ToSlash(strings.TrimPrefix(strings.TrimPrefix(p, start.abs), string(filepath.Separator)))
		rel := prefix + sub
		isDir := d.IsDir()
		if d.Name() == ".git" || (honour && w.ign.ignored(rel, isDir)) {
			if isDir {
				return filepath.SkipDir
			}
			return nil
		}
		depth := strings.Count(sub, "/") + 1
		if err := fn(entry{rel: rel, abs: p, depth: depth, d: d}); err != nil {
			return err
		}
		if isDir && maxDepth > 0 && depth >= maxDepth {
			return filepath.SkipDir
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// isGitPath reports whether rel is .git or inside it.
func isGitPath(rel string) bool {
	for _, s := range strings.Split(rel, "/") {
		if s == ".git" {
			return true
		}
	}
	return false
}
