package search

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/argcheck"
	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
)

// grep limits.
const (
	maxGrepFileBytes  = 2 << 20
	defaultGrepMax    = 200
	maxGrepResults    = 2000
	maxGrepContext    = 5
	maxGrepLineBytes  = 500
	maxGrepOutputSize = 256 << 10
)

// grepArgs are grep's arguments; the JSON names are its schema's
// properties (plugin.hcl).
type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
	Context    *int   `json:"context"`
	MaxResults *int   `json:"max_results"`
}

// grepQuery is a validated grep.
type grepQuery struct {
	re *regexp.Regexp // matched per line
	// lits, when set, are literals one of which every match contains:
	// only the lines holding one are matched.
	lits []literal
	// whole, when set, is the pattern as a literal, matched in place of re.
	whole *wholeLiteral
	// quick, when lits is nil, is matched against a whole file first, to
	// dismiss a file without a match in one pass; nil to skip that.
	quick   *regexp.Regexp
	glob    string
	context int
	max     int
}

// grep searches the files below a.Path in the workspace ws (or the file
// a.Path) for lines matching a.Pattern.
func grep(ws string, a grepArgs) (string, error) {
	q, err := a.query()
	if err != nil {
		return "", err
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := workspace.Resolve(ws, a.Path)
	if err != nil {
		return "", err
	}
	var files []string
	if workspace.IsDir(t.Abs) {
		if t, err = workspace.Dir(ws, a.Path); err != nil {
			return "", err
		}
		if files, err = grepFiles(t, q.glob); err != nil {
			return "", walkError(a.Path, err)
		}
	} else {
		if _, err := workspace.RegularFile(t, a.Path); err != nil {
			return "", err
		}
		files = []string{t.Rel} // a file named directly is searched, ignored or not
	}
	res := search(t.Root, files, q, searchWorkers())
	return workspace.ValidText(res.format(a.Pattern, a.Path, len(files), q.max)), nil
}

// query validates the arguments.
func (a grepArgs) query() (grepQuery, error) {
	if a.Pattern == "" {
		return grepQuery{}, fmt.Errorf("pattern is required")
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return grepQuery{}, fmt.Errorf("pattern is not a valid RE2 regular expression: %v", err)
	}
	q := grepQuery{re: re, glob: a.Glob, lits: requiredLiterals(expr), whole: literalPattern(expr)}
	// Without literals, a file with no match anywhere is dismissed with one
	// pass over its bytes; (?m) keeps ^ per line. Skipped where whole-file
	// matching could miss a line's match: $ (lines are matched without a
	// CR before their LF), \A and \z, and flags that might turn
	// multi-line mode off.
	if q.lits == nil && !strings.ContainsAny(a.Pattern, "$") && !strings.Contains(a.Pattern, `\A`) &&
		!strings.Contains(a.Pattern, `\z`) && !strings.Contains(a.Pattern, "(?") {
		q.quick = regexp.MustCompile("(?m)" + expr)
	}
	if err := checkGlob("glob", a.Glob, false); err != nil {
		return grepQuery{}, err
	}
	if q.context, err = argcheck.Int("context", a.Context, 0, 0, maxGrepContext); err != nil {
		return grepQuery{}, err
	}
	if q.max, err = argcheck.Int("max_results", a.MaxResults, defaultGrepMax, 1, maxGrepResults); err != nil {
		return grepQuery{}, err
	}
	return q, nil
}

// grepFiles lists the regular files below t that glob admits, sorted by
// path. A glob without "/" matches the file name at any depth.
func grepFiles(t workspace.Target, glob string) ([]string, error) {
	var files []string
	err := walk(t, func(e workspace.Entry) error {
		if !e.Type().IsRegular() {
			return nil
		}
		if glob != "" && !globAdmits(glob, workspace.RelBelow(t.Rel, e.Rel)) {
			return nil
		}
		files = append(files, e.Rel)
		return nil
	})
	sort.Strings(files)
	return files, err
}

func globAdmits(glob, rel string) bool {
	if ok, _ := doublestar.Match(glob, rel); ok {
		return true
	}
	if !strings.Contains(glob, "/") {
		ok, _ := doublestar.Match(glob, path.Base(rel))
		return ok
	}
	return false
}

// format renders the search: matches grouped per file, "--" between
// groups that are not adjacent, notes last.
func (r grepResult) format(pattern, where string, searched, max int) string {
	if r.matches == 0 {
		msg := fmt.Sprintf("No matches for %q in %s (%d files searched", pattern, where, searched-r.skipped)
		if r.skipped > 0 {
			msg += fmt.Sprintf("; %d binary or over-%d-MiB files skipped", r.skipped, maxGrepFileBytes>>20)
		}
		return msg + ")."
	}
	var b strings.Builder
	shown := 0
	for _, f := range r.files {
		for _, l := range f.lines {
			if l.match {
				if shown == max {
					fmt.Fprintf(&b, "[truncated: showing the first %d matching lines; narrow the pattern, path or glob, or raise max_results]\n", max)
					return b.String()
				}
				shown++
			}
			if b.Len() > maxGrepOutputSize {
				fmt.Fprintf(&b, "[truncated: output cut at %d KiB after %d matching lines; narrow the search]\n", maxGrepOutputSize>>10, shown)
				return b.String()
			}
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
	}
	if r.stopped {
		fmt.Fprintf(&b, "[truncated: showing the first %d matching lines; narrow the pattern, path or glob, or raise max_results]\n", max)
	}
	return b.String()
}
