package fs

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed grep.md
var grepDoc string

// grep limits.
const (
	maxGrepFileBytes  = 2 << 20
	defaultGrepMax    = 200
	maxGrepResults    = 2000
	maxGrepContext    = 5
	maxGrepLineBytes  = 500
	maxGrepOutputSize = 256 << 10
)

type grepTool struct{}

func (grepTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "grep", Description: grepDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: schema(`"pattern":{"type":"string","description":"RE2 regular expression, matched per line."},`+
			`"path":{"type":"string","description":"Workspace-relative directory or file to search (default: the workspace root)."},`+
			`"glob":{"type":"string","description":"Only files matching this glob, e.g. *.go or src/**/*.ts."},`+
			`"ignore_case":{"type":"boolean"},`+
			`"context":{"type":"integer","minimum":0,"maximum":5,"description":"Lines of context around each match."},`+
			`"max_results":{"type":"integer","minimum":1,"maximum":2000,"description":"Matching lines to show (default 200)."}`, "pattern"),
	}
}

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
	re      *regexp.Regexp // matched per line
	quick   *regexp.Regexp // matched per file first; nil to skip that
	fold    []byte         // lower-case ASCII literal for a case-insensitive plain-string pattern; replaces quick
	glob    string
	context int
	max     int
}

func (grepTool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a grepArgs
	if err := c.DecodeArguments(&a); err != nil {
		return argError(err), nil
	}
	q, err := a.query()
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	var files []string
	if isDir(t.abs) {
		if t, err = dirTarget(c.Workspace, a.Path); err != nil {
			return tool.Errorf("%v", err), nil
		}
		if files, err = grepFiles(ctx, t, q.glob); err != nil {
			return listError(ctx, a.Path, err)
		}
	} else {
		if _, err := regularFile(t, a.Path); err != nil {
			return tool.Errorf("%v", err), nil
		}
		files = []string{t.rel} // a file named directly is searched, ignored or not
	}
	res := search(ctx, t.root, files, q)
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: validText(res.format(a.Pattern, a.Path, len(files), q.max))}, nil
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
	q := grepQuery{re: re, glob: a.Glob}
	// A file with no match anywhere is dismissed with one pass over its
	// bytes; (?m) keeps ^ per line. Skipped where whole-file matching could
	// miss a line's match: $ (lines are matched without a CR before their
	// LF), \A and \z, and flags that might turn multi-line mode off.
	if !strings.ContainsAny(a.Pattern, "$") && !strings.Contains(a.Pattern, `\A`) &&
		!strings.Contains(a.Pattern, `\z`) && !strings.Contains(a.Pattern, "(?") {
		q.quick = regexp.MustCompile("(?m)" + expr)
	}
	if a.IgnoreCase {
		q.fold = foldLiteral(expr)
	}
	if err := checkGlob("glob", a.Glob, false); err != nil {
		return grepQuery{}, err
	}
	if q.context, err = intArg("context", a.Context, 0, 0, maxGrepContext); err != nil {
		return grepQuery{}, err
	}
	if q.max, err = intArg("max_results", a.MaxResults, defaultGrepMax, 1, maxGrepResults); err != nil {
		return grepQuery{}, err
	}
	return q, nil
}

// foldLiteral is the lower-cased pattern when the case-insensitive expr
// is a plain ASCII string: Go's regexp cannot use a fast literal scan for
// those, a byte loop can.
func foldLiteral(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase == 0 || len(re.Rune) < 2 {
		return nil
	}
	lit := make([]byte, len(re.Rune))
	for i, r := range re.Rune {
		if r >= 0x80 || r == 'k' || r == 'K' || r == 's' || r == 'S' {
			return nil // Unicode folds k to the Kelvin sign and s to the long s
		}
		lit[i] = byte(unicode.ToLower(r))
	}
	return lit
}

// grepFiles lists the regular files below t that glob admits, sorted by
// path. A glob without "/" matches the file name at any depth.
func grepFiles(ctx context.Context, t target, glob string) ([]string, error) {
	var files []string
	err := newWalker(t.root).walk(ctx, t, 0, func(e entry) error {
		if !e.d.Type().IsRegular() {
			return nil
		}
		if glob != "" && !globAdmits(glob, relBelow(t.rel, e.rel)) {
			return nil
		}
		files = append(files, e.rel)
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
