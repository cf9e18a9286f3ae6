package search

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
)

// grepLine is one output line: a match ("path:N:text"), context
// ("path-N-text") or a group separator ("--").
type grepLine struct {
	text  string
	match bool
}

// fileMatches is what one file contributed.
type fileMatches struct {
	lines   []grepLine
	matches int
}

// grepResult is a whole search, files in path order.
type grepResult struct {
	files   []fileMatches
	matches int
	skipped int  // binary, too large or unreadable
	stopped bool // more matches exist than were looked for
}

// search greps files (workspace-relative, sorted) with up to workers
// workers. Workers take files in order; the contiguous prefix of finished
// files is tallied as results come in, and once it holds more than q.max
// matching lines no further files are started: the answer is the same as
// a full search, cut at the same place, whatever the number of workers.
// One worker runs on the calling goroutine.
func search(root string, files []string, q grepQuery, workers int) grepResult {
	s := &searcher{root: root, files: files, q: q, results: make([]fileMatches, len(files)), done: make([]bool, len(files))}
	if workers = min(workers, len(files)); workers <= 1 {
		s.work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(s.work)
		}
		wg.Wait()
	}
	return grepResult{files: s.results[:s.frontier], matches: s.total, skipped: s.skipped, stopped: s.stopped}
}

// searcher is the shared state of one search.
type searcher struct {
	root  string
	files []string
	q     grepQuery

	mu       sync.Mutex
	next     int // next file to start
	results  []fileMatches
	done     []bool
	frontier int // files [0, frontier) are finished and tallied
	total    int // matching lines in files [0, frontier)
	skipped  int
	stopped  bool
}

// claim hands out the next file, or false when there is none or enough
// has been found.
func (s *searcher) claim() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.next == len(s.files) {
		return 0, false
	}
	s.next++
	return s.next - 1, true
}

// finish records file i's result and advances the tally.
func (s *searcher) finish(i int, fm fileMatches, skipped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results[i], s.done[i] = fm, true
	if skipped {
		s.skipped++
	}
	for s.frontier < len(s.files) && s.done[s.frontier] && !s.stopped {
		s.total += s.results[s.frontier].matches
		s.frontier++
		if s.total > s.q.max {
			s.stopped = true
		}
	}
}

func (s *searcher) work() {
	var buf bytes.Buffer
	for {
		i, ok := s.claim()
		if !ok {
			return
		}
		data, ok := readText(filepath.Join(s.root, filepath.FromSlash(s.files[i])), &buf)
		var fm fileMatches
		if ok {
			fm = scanFile(s.files[i], data, s.q)
		}
		s.finish(i, fm, !ok)
	}
}

// readText reads a file into buf, refusing files over the size cap and
// binary ones.
func readText(name string, buf *bytes.Buffer) ([]byte, bool) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(io.LimitReader(f, maxGrepFileBytes+1)); err != nil || buf.Len() > maxGrepFileBytes {
		return nil, false
	}
	data := buf.Bytes()
	if workspace.IsBinary(data) {
		return nil, false
	}
	return data, true
}

// scanFile finds the matching lines of one file, with context, stopping
// once it has more than q.max (no more could be shown).
func scanFile(rel string, data []byte, q grepQuery) fileMatches {
	lines, hits := matchLines(data, q)
	if len(hits) == 0 {
		return fileMatches{}
	}
	line := func(i int) []byte { return lineText(data, lines[i]) }
	fm := fileMatches{matches: len(hits)}
	last := -1 // last line emitted
	emit := func(i int, match bool) {
		sep := '-'
		if match {
			sep = ':'
		}
		fm.lines = append(fm.lines, grepLine{text: fmt.Sprintf("%s%c%d%c%s", rel, sep, i+1, sep, clipLine(line(i))), match: match})
		last = i
	}
	for h, m := range hits {
		from := max(m-q.context, last+1)
		if q.context > 0 && last >= 0 && from > last+1 {
			fm.lines = append(fm.lines, grepLine{text: "--"})
		}
		for i := from; i < m; i++ {
			emit(i, false)
		}
		emit(m, true)
		to := min(m+q.context, len(lines)-1)
		if h+1 < len(hits) {
			to = min(to, hits[h+1]-1)
		}
		for i := m + 1; i <= to; i++ {
			emit(i, false)
		}
	}
	return fm
}

// matchLines returns the spans of data's lines and the indexes of those
// q.re matches, at most q.max+1 of them; no spans when nothing matches.
func matchLines(data []byte, q grepQuery) ([][2]int, []int) {
	if q.lits != nil {
		return literalLines(data, q)
	}
	if q.quick != nil && !q.quick.Match(data) {
		return nil, nil
	}
	lines := lineSpans(data)
	var hits []int
	for i, span := range lines {
		if q.matchLine(lineText(data, span)) {
			hits = append(hits, i)
			if len(hits) > q.max {
				break
			}
		}
	}
	return lines, hits
}

// literalLines is matchLines for a query with literals: only the lines
// holding one of them are matched. A match lies within its line and
// contains a literal, so no matching line is missed.
func literalLines(data []byte, q grepQuery) ([][2]int, []int) {
	occ := findLiterals(data, q.lits)
	at := occ.from(0)
	if at < 0 {
		return nil, nil
	}
	lines := lineSpans(data)
	var hits []int
	for i := 0; at >= 0; at = occ.from(lines[i][1] + 1) {
		for lines[i][1] < at {
			i++
		}
		if q.matchLine(lineText(data, lines[i])) {
			hits = append(hits, i)
			if len(hits) > q.max {
				break
			}
		}
	}
	return lines, hits
}

// matchLine reports whether q matches line.
func (q grepQuery) matchLine(line []byte) bool {
	if q.whole != nil {
		return q.whole.in(line)
	}
	return q.re.Match(line)
}

// lineText is the line at span, without the CR of a CRLF ending.
func lineText(data []byte, span [2]int) []byte {
	return bytes.TrimSuffix(data[span[0]:span[1]], []byte{'\r'})
}

// lineSpans is the [start, end) of every line of data, newline excluded.
func lineSpans(data []byte) [][2]int {
	var spans [][2]int
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			spans = append(spans, [2]int{start, len(data)})
			break
		}
		spans = append(spans, [2]int{start, start + end})
		start += end + 1
	}
	return spans
}

// clipLine cuts very long lines (minified code) for the output.
func clipLine(b []byte) string {
	if len(b) <= maxGrepLineBytes {
		return string(b)
	}
	return fmt.Sprintf("%s… [+%d bytes]", b[:maxGrepLineBytes], len(b)-maxGrepLineBytes)
}
