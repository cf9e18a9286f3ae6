package workspace

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// ErrStop, returned by a walk's function, ends the walk without an error.
var ErrStop = errors.New("stop walking")

// Entry is one thing a walk visits. Its DirEntry describes it without
// following a symlink.
type Entry struct {
	fs.DirEntry
	// Rel is the path relative to the workspace, slash-separated.
	Rel string
	// Abs is the path on disk.
	Abs string
	// Depth is 1 for the start directory's children.
	Depth int
}

// Walk calls fn for every entry below start, a directory Target, in
// lexical order, down to maxDepth levels (0: unlimited). It skips .git and
// what .gitignore files ignore; when start itself is ignored (the model
// named an ignored directory) its contents are walked anyway, and only
// .git stays hidden. fn returning ErrStop ends the walk cleanly;
// unreadable directories below start are skipped. The walk stops with
// ctx's error when ctx is done.
func Walk(ctx context.Context, start Target, maxDepth int, fn func(Entry) error) error {
	ign := newIgnorer(start.Root)
	honour := !ign.ignoredPath(start.Rel, true)
	prefix := ""
	if start.Rel != "." {
		prefix = start.Rel + "/"
	}
	err := filepath.WalkDir(start.Abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start.Abs {
				return err
			}
			return nil // an unreadable entry is skipped, not fatal
		}
		if p == start.Abs {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sub := filepath.ToSlash(strings.TrimPrefix(strings.TrimPrefix(p, start.Abs), string(filepath.Separator)))
		rel := prefix + sub
		isDir := d.IsDir()
		if d.Name() == ".git" || (honour && ign.ignored(rel, isDir)) {
			if isDir {
				return filepath.SkipDir
			}
			return nil
		}
		depth := strings.Count(sub, "/") + 1
		if err := fn(Entry{DirEntry: d, Rel: rel, Abs: p, Depth: depth}); err != nil {
			return err
		}
		if isDir && maxDepth > 0 && depth >= maxDepth {
			return filepath.SkipDir
		}
		return nil
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}
