package fs

import (
	"io/fs"
	"path/filepath"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// walker visits workspace files below a root, skipping .git and what the
// workspace's .gitignore files ignore.
type walker struct {
	root     string // workspace root, symlinks resolved
	ignorers map[string]*ignore.GitIgnore
}

func newWalker(root string) *walker {
	return &walker{root: root, ignorers: map[string]*ignore.GitIgnore{}}
}

// ignored reports whether rel (slash-separated, workspace-relative) is
// ignored by a .gitignore in it or any parent directory.
func (w *walker) ignored(rel string, dir bool) bool {
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return true
	}
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts); i++ {
		base := strings.Join(parts[:i], "/")
		gi := w.gitignore(base)
		if gi == nil {
			continue
		}
		sub := strings.Join(parts[i:], "/")
		if dir {
			sub += "/"
		}
		if gi.MatchesPath(sub) {
			return true
		}
	}
	return false
}

func (w *walker) gitignore(dir string) *ignore.GitIgnore {
	if gi, ok := w.ignorers[dir]; ok {
		return gi
	}
	gi, err := ignore.CompileIgnoreFile(filepath.Join(w.root, filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		gi = nil
	}
	w.ignorers[dir] = gi
	return gi
}

// walk calls fn for every entry below start (absolute), depth-limited
// (0 = unlimited), in lexical order, skipping ignored entries.
func (w *walker) walk(start string, depth int, fn func(rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil
		}
		if p == start {
			return nil
		}
		rel, _ := filepath.Rel(w.root, p)
		rel = filepath.ToSlash(rel)
		if w.ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err := fn(rel, d); err != nil {
			return err
		}
		if d.IsDir() && depth > 0 {
			sub, _ := filepath.Rel(start, p)
			if strings.Count(filepath.ToSlash(sub), "/")+1 >= depth {
				return filepath.SkipDir
			}
		}
		return nil
	})
}

func rootOf(workspace string) string {
	if r, err := filepath.EvalSymlinks(workspace); err == nil {
		return r
	}
	return workspace
}

func fileSize(d fs.DirEntry) int64 {
	if fi, err := d.Info(); err == nil {
		return fi.Size()
	}
	return 0
}
