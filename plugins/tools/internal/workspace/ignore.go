package workspace

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ignorePattern is one line of a .gitignore file, compiled.
type ignorePattern struct {
	negate  bool     // "!pattern": re-include
	dirOnly bool     // "pattern/": directories only
	segs    []string // path.Match patterns per path segment; "**" spans segments
}

// ignoreFile is the patterns of one .gitignore, in file order.
type ignoreFile []ignorePattern

// parseIgnore compiles gitignore text (gitignore(5)): blank lines and
// comments are skipped, trailing spaces dropped unless escaped; "!"
// negates; a trailing "/" restricts to directories; a pattern with a
// slash elsewhere is anchored to the file's directory, one without
// matches a name at any depth; "**" spans directories. Lines that are not
// valid patterns are skipped, as git does.
func parseIgnore(text string) ignoreFile {
	var out ignoreFile
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if p, ok := parseIgnoreLine(sc.Text()); ok {
			out = append(out, p)
		}
	}
	return out
}

func parseIgnoreLine(line string) (ignorePattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignorePattern{}, false
	}
	var p ignorePattern
	if line[0] == '!' {
		p.negate, line = true, line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignorePattern{}, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	if !anchored {
		line = "**/" + line
	}
	for _, s := range strings.Split(line, "/") {
		if s == "" {
			continue
		}
		if s != "**" {
			s = strings.ReplaceAll(s, "[!", "[^")
			if _, err := path.Match(s, ""); err != nil {
				return ignorePattern{}, false
			}
		}
		p.segs = append(p.segs, s)
	}
	return p, len(p.segs) > 0
}

// decide reports whether the file ignores rel (slash-separated, relative
// to the file's directory): the last matching pattern decides. found is
// false when no pattern matches.
func (f ignoreFile) decide(segs []string, dir bool) (ignored, found bool) {
	for i := len(f) - 1; i >= 0; i-- {
		p := f[i]
		if p.dirOnly && !dir {
			continue
		}
		if matchSegs(p.segs, segs) {
			return !p.negate, true
		}
	}
	return false, false
}

// matchSegs matches path segments against pattern segments, "**"
// standing for zero or more segments (one or more when it ends the
// pattern: "dir/**" is what is inside dir).
func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return len(name) > 0
			}
			for i := 0; i < len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// ignorer answers "is this workspace path ignored?" from the .gitignore
// files of its directory and every parent up to the workspace root, plus
// the repository's .git/info/exclude. Files are read once and cached; an
// ignorer belongs to one call and is not safe for concurrent use.
type ignorer struct {
	root string
	// scopes caches, by workspace-relative directory ("" is the root),
	// the non-empty .gitignore files that apply inside it, deepest first.
	scopes map[string][]ignoreScope
	// excl is .git/info/exclude, once read.
	excl     ignoreFile
	exclRead bool
}

// ignoreScope is one non-empty .gitignore and where it applies.
type ignoreScope struct {
	depth int // path segments in the file's directory: 0 for the root
	file  ignoreFile
}

func newIgnorer(root string) *ignorer {
	return &ignorer{root: root, scopes: map[string][]ignoreScope{}}
}

// scopesIn returns the .gitignore files that apply inside dir
// (workspace-relative), deepest first. Each directory's file is read the
// first time the directory or one below it is asked about.
func (ig *ignorer) scopesIn(dir string) []ignoreScope {
	if sc, ok := ig.scopes[dir]; ok {
		return sc
	}
	var parent []ignoreScope
	depth := 0
	if dir != "" {
		parent = ig.scopesIn(parentDir(dir))
		depth = strings.Count(dir, "/") + 1
	}
	sc := parent
	if b, err := os.ReadFile(filepath.Join(ig.root, filepath.FromSlash(dir), ".gitignore")); err == nil {
		if f := parseIgnore(string(b)); len(f) > 0 {
			sc = append([]ignoreScope{{depth: depth, file: f}}, parent...)
		}
	}
	ig.scopes[dir] = sc
	return sc
}

// parentDir is the directory holding rel, "" for the root.
func parentDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// exclude is the repository's .git/info/exclude, the weakest source.
func (ig *ignorer) exclude() ignoreFile {
	if !ig.exclRead {
		if b, err := os.ReadFile(filepath.Join(ig.root, ".git", "info", "exclude")); err == nil {
			ig.excl = parseIgnore(string(b))
		}
		ig.exclRead = true
	}
	return ig.excl
}

// ignored reports whether rel (workspace-relative, slash-separated) is
// ignored by itself, without looking at its parents: a walk that skips
// ignored directories never reaches their contents. The .git directory is
// always ignored.
func (ig *ignorer) ignored(rel string, dir bool) bool {
	if rel == "" || rel == "." {
		return false
	}
	segs := strings.Split(rel, "/")
	if segs[0] == ".git" || segs[len(segs)-1] == ".git" {
		return true
	}
	// Deeper files override shallower ones.
	for _, sc := range ig.scopesIn(parentDir(rel)) {
		if ign, found := sc.file.decide(segs[sc.depth:], dir); found {
			return ign
		}
	}
	ign, _ := ig.exclude().decide(segs, dir)
	return ign
}

// ignoredPath reports whether rel or any directory above it is ignored:
// what git would say about a path named directly.
func (ig *ignorer) ignoredPath(rel string, dir bool) bool {
	if rel == "" || rel == "." {
		return false
	}
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		if ig.ignored(strings.Join(segs[:i], "/"), true) {
			return true
		}
	}
	return ig.ignored(rel, dir)
}
