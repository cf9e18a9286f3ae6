package fs

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed grep.md
var grepDoc string

const maxGrepFileBytes = 2 << 20

type grepTool struct{}

func (grepTool) Spec() tool.Spec {
	return tool.Spec{Name: "grep", Description: grepDoc, Risk: tool.RiskReadOnly, PathArguments: []string{"path"},
		InputSchema: []byte(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"},"ignore_case":{"type":"boolean"},"context":{"type":"integer","minimum":0,"maximum":5},"max_results":{"type":"integer","minimum":1}},"required":["pattern"]}`)}
}

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
	Context    int    `json:"context"`
	MaxResults int    `json:"max_results"`
}

func (grepTool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a grepArgs
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return tool.Errorf("pattern is not a valid RE2 regular expression: %v", err), nil
	}
	if a.Context < 0 || a.Context > 5 {
		return tool.Errorf("context must be 0 to 5, got %d", a.Context), nil
	}
	if a.MaxResults <= 0 {
		a.MaxResults = 200
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return tool.Errorf("glob %q is not valid", a.Glob), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	abs, err := resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	files, err := grepFiles(rootOf(c.Workspace), abs, a.Glob)
	if err != nil {
		return tool.Errorf("grep: %v", err), nil
	}
	results := searchAll(ctx, files, re, a.Context)
	return tool.Result{Content: format(results, a.MaxResults, a.Pattern)}, nil
}

type fileRef struct{ abs, rel string }

func grepFiles(root, start string, glob string) ([]fileRef, error) {
	w := newWalker(root)
	var files []fileRef
	if fi, err := os.Stat(start); err == nil && !fi.IsDir() {
		rel, _ := filepath.Rel(root, start)
		return []fileRef{{start, filepath.ToSlash(rel)}}, nil
	}
	err := w.walk(start, 0, func(rel string, d fs.DirEntry) error {
		if d.IsDir() || !d.Type().IsRegular() || fileSize(d) > maxGrepFileBytes {
			return nil
		}
		if glob != "" {
			if ok, _ := doublestar.Match(glob, rel); !ok {
				if ok, _ := doublestar.Match(glob, filepath.Base(rel)); !ok {
					return nil
				}
			}
		}
		files = append(files, fileRef{filepath.Join(root, filepath.FromSlash(rel)), rel})
		return nil
	})
	return files, err
}

type match struct {
	rel   string
	lines []string // formatted output lines, context included
}

// searchAll greps files with a bounded worker pool; results come back
// sorted by path.
func searchAll(ctx context.Context, files []fileRef, re *regexp.Regexp, context int) []match {
	jobs := make(chan fileRef)
	var mu sync.Mutex
	var out []match
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 2) {
		wg.Go(func() {
			for f := range jobs {
				if m, ok := searchFile(f, re, context); ok {
					mu.Lock()
					out = append(out, m)
					mu.Unlock()
				}
			}
		})
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

func searchFile(f fileRef, re *regexp.Regexp, context int) (match, bool) {
	data, err := os.ReadFile(f.abs)
	if err != nil || isBinary(data) {
		return match{}, false
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxGrepFileBytes)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	m := match{rel: f.rel}
	shown := -1
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		for j := max(i-context, shown+1); j <= min(i+context, len(lines)-1); j++ {
			sep := "-"
			if j == i || re.MatchString(lines[j]) {
				sep = ":"
			}
			m.lines = append(m.lines, fmt.Sprintf("%s:%d%s%s", f.rel, j+1, sep, lines[j]))
			shown = j
		}
	}
	return m, len(m.lines) > 0
}

func format(results []match, limit int, pattern string) string {
	if len(results) == 0 {
		return fmt.Sprintf("No matches for %s.", pattern)
	}
	var b strings.Builder
	n := 0
	for _, m := range results {
		for _, l := range m.lines {
			if n == limit {
				fmt.Fprintf(&b, "[truncated at %d lines; narrow the pattern or the path]\n", limit)
				return b.String()
			}
			b.WriteString(l + "\n")
			n++
		}
	}
	return b.String()
}
