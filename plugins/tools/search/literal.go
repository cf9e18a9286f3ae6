package search

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// maxLiterals bounds how many alternatives a prefilter searches for.
const maxLiterals = 8

// literal is a string that a match may have to contain.
type literal struct {
	text []byte
	fold bool // text is lower-case ASCII, found in any case
}

// requiredLiterals returns literals one of which every match of expr
// contains, or nil when it has no such set worth searching for. grep then
// looks for the literals with a plain byte search and runs the regular
// expression only on the lines holding one: Go's regexp has no such
// prefilter for alternations or case-insensitive patterns, and its
// matchers cost many times more in WASM than natively.
func requiredLiterals(expr string) []literal {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits := required(re.Simplify())
	for _, l := range lits {
		if bytes.IndexByte(l.text, '\n') >= 0 {
			return nil // cannot lie within a line; leave such patterns to the matcher
		}
	}
	return lits
}

// required is requiredLiterals on a parsed expression.
func required(re *syntax.Regexp) []literal {
	switch re.Op {
	case syntax.OpLiteral:
		if l, ok := newLiteral(re); ok {
			return []literal{l}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// A match contains a match of every part: the part with the
		// longest shortest literal filters best.
		var best []literal
		for _, sub := range re.Sub {
			if lits := required(sub); lits != nil && (best == nil || shortest(lits) > shortest(best)) {
				best = lits
			}
		}
		return best
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			lits := required(sub)
			if lits == nil {
				return nil
			}
			all = append(all, lits...)
		}
		if len(all) <= maxLiterals {
			return all
		}
	}
	return nil
}

// newLiteral is the literal of an OpLiteral. A case-insensitive one is
// searched for with ASCII folding, so it is cut to its longest run of
// ASCII without k or s: Unicode folds k to the Kelvin sign and s to the
// long s, and a non-ASCII letter may have several forms.
func newLiteral(re *syntax.Regexp) (literal, bool) {
	if len(re.Rune) == 0 {
		return literal{}, false
	}
	if re.Flags&syntax.FoldCase == 0 {
		if slices.Contains(re.Rune, utf8.RuneError) {
			return literal{}, false // it also matches any invalid byte
		}
		return literal{text: []byte(string(re.Rune))}, true
	}
	var best, run []byte
	for _, r := range append(re.Rune, 'k') { // 'k' ends the last run
		if r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S' {
			if len(run) > len(best) {
				best = run
			}
			run = nil
			continue
		}
		run = append(run, lower(byte(r)))
	}
	return literal{text: best, fold: true}, len(best) > 0
}

func shortest(lits []literal) int {
	n := len(lits[0].text)
	for _, l := range lits[1:] {
		n = min(n, len(l.text))
	}
	return n
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// occurrences finds where any of a set of literals occurs in data, in
// order, searching for each literal again only once the caller has moved
// past its last occurrence.
type occurrences struct {
	data []byte
	lits []literal
	next []int // offset of each literal's next occurrence; -1: none left
}

func findLiterals(data []byte, lits []literal) *occurrences {
	o := &occurrences{data: data, lits: lits, next: make([]int, len(lits))}
	for i := range lits {
		o.next[i] = o.index(i, 0)
	}
	return o
}

// from returns the first offset at or after off where a literal occurs,
// or -1.
func (o *occurrences) from(off int) int {
	first := -1
	for i := range o.lits {
		if o.next[i] >= 0 && o.next[i] < off {
			o.next[i] = o.index(i, off)
		}
		if n := o.next[i]; n >= 0 && (first < 0 || n < first) {
			first = n
		}
	}
	return first
}

// index is the offset of literal i's first occurrence at or after off, or
// -1.
func (o *occurrences) index(i, off int) int {
	if off >= len(o.data) {
		return -1
	}
	var n int
	if l := o.lits[i]; l.fold {
		n = indexFold(o.data[off:], l.text)
	} else {
		n = bytes.Index(o.data[off:], l.text)
	}
	if n < 0 {
		return -1
	}
	return off + n
}

// indexFold is bytes.Index for lit (lower-case ASCII) in any case. It
// jumps between occurrences of lit's first byte with bytes.IndexByte.
func indexFold(data, lit []byte) int {
	lo := lit[0]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	nextLo, nextUp := -2, -2 // -2: not searched yet
	for i := 0; i+len(lit) <= len(data); {
		if nextLo != -1 && nextLo < i {
			nextLo = indexFrom(data, lo, i)
		}
		if up != lo && nextUp != -1 && nextUp < i {
			nextUp = indexFrom(data, up, i)
		}
		j := nextLo
		if up != lo && nextUp >= 0 && (j < 0 || nextUp < j) {
			j = nextUp
		}
		if j < 0 || j+len(lit) > len(data) {
			return -1
		}
		if equalFold(data[j:j+len(lit)], lit) {
			return j
		}
		i = j + 1
	}
	return -1
}

// indexFrom is the offset of c's first occurrence at or after off, or -1.
func indexFrom(data []byte, c byte, off int) int {
	if n := bytes.IndexByte(data[off:], c); n >= 0 {
		return off + n
	}
	return -1
}

// equalFold reports whether b equals lower (lower-case ASCII) in any case.
func equalFold(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// wholeLiteral is a pattern that is one literal string, matched without
// the regexp machinery, which for case-insensitive patterns costs tens of
// microseconds a line in WASM (a Unicode fold lookup per byte tried).
type wholeLiteral struct {
	runes []rune
	fold  bool // Unicode simple folding, as (?i) does
}

// literalPattern returns expr as a wholeLiteral, or nil when it is more
// than a literal.
func literalPattern(expr string) *wholeLiteral {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpLiteral || len(re.Rune) == 0 || slices.Contains(re.Rune, utf8.RuneError) {
		return nil // U+FFFD also matches any invalid byte: leave it to regexp
	}
	return &wholeLiteral{runes: re.Rune, fold: re.Flags&syntax.FoldCase != 0}
}

// in reports whether line holds the literal: what the regular expression
// would say, trying each rune position as Go's regexp does.
func (w *wholeLiteral) in(line []byte) bool {
	if !w.fold {
		return bytes.Contains(line, []byte(string(w.runes)))
	}
	for i := 0; i < len(line); {
		if w.foldAt(line[i:]) {
			return true
		}
		_, size := utf8.DecodeRune(line[i:])
		i += size
	}
	return false
}

// foldAt reports whether b starts with the literal under simple folding.
func (w *wholeLiteral) foldAt(b []byte) bool {
	for _, r := range w.runes {
		if len(b) == 0 {
			return false
		}
		c, size := rune(b[0]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRune(b)
		}
		if !equalFoldRune(c, r) {
			return false
		}
		b = b[size:]
	}
	return true
}

// equalFoldRune reports whether c is r or in r's simple folding orbit,
// the test regexp makes for a case-insensitive rune.
func equalFoldRune(c, r rune) bool {
	if c == r {
		return true
	}
	if c < utf8.RuneSelf && r < utf8.RuneSelf && r != 'k' && r != 'K' && r != 's' && r != 'S' {
		return lower(byte(c)) == lower(byte(r))
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == c {
			return true
		}
	}
	return false
}
