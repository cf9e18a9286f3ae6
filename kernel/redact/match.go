package redact

import (
	"regexp"
	"strings"
)

// pattern is a compiled patternSpec.
type pattern struct {
	re        *regexp.Regexp
	label     string
	secret    int // index of the "secret" group, or 0 for the whole match
	boundary  bool
	multiline bool
	assign    bool
	check     func(match, secret string) bool
}

// anchor is one literal at which a pattern is tried.
type anchor struct {
	text    string // lower-case ASCII, at least two bytes
	pattern int
}

// anchorSet finds every anchor of every pattern in one pass over the text,
// case-insensitively, without allocating a lower-cased copy.
type anchorSet struct {
	// byFirst lists the anchors by their first byte.
	byFirst [256][]anchor
	// pairs has bit a<<8|b set when some anchor starts with the bytes a, b.
	pairs [1 << 16 / 64]uint64
}

// hit is an anchor found at pos.
type hit struct {
	pos     int
	pattern int
}

// compile turns the table into patterns and their anchor set.
func compile() ([]pattern, *anchorSet) {
	out := make([]pattern, 0, len(specs))
	set := &anchorSet{}
	for i, s := range specs {
		re := regexp.MustCompile(`\A(?:` + s.expr + `)`)
		label := Placeholder
		if s.kind != "" {
			label = "[REDACTED:" + s.kind + "]"
		}
		out = append(out, pattern{re: re, label: label, secret: max(re.SubexpIndex("secret"), 0),
			boundary: s.boundary, multiline: s.multiline, assign: s.assign, check: s.check})
		for _, a := range s.anchors {
			set.byFirst[a[0]] = append(set.byFirst[a[0]], anchor{a, i})
			pair := uint16(a[0])<<8 | uint16(a[1])
			set.pairs[pair/64] |= 1 << (pair % 64)
		}
	}
	return out, set
}

// scan appends to hits every anchor occurrence in s, in position order,
// for patterns numbered from on.
func (a *anchorSet) scan(s string, from int, hits []hit) []hit {
	for i := 0; i+1 < len(s); i++ {
		c0, c1 := lowerByte(s[i]), lowerByte(s[i+1])
		pair := uint16(c0)<<8 | uint16(c1)
		if a.pairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		for _, an := range a.byFirst[c0] {
			if an.pattern >= from && hasPrefixFold(s[i:], an.text) {
				hits = append(hits, hit{i, an.pattern})
			}
		}
	}
	return hits
}

// apply replaces every accepted match of pattern number idx in s, trying
// it at its hits.
func (p *pattern) apply(s string, idx int, hits []hit) string {
	var b strings.Builder
	last, reach := 0, 0
	for _, h := range hits {
		if h.pattern != idx || h.pos < reach {
			continue
		}
		sp, ok := p.matchAt(s, h.pos)
		if !ok {
			continue
		}
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:sp.secretStart])
		b.WriteString(p.label)
		last, reach = sp.secretEnd, sp.end
	}
	if reach == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// span is an accepted match: the whole match and the part to replace.
type span struct{ start, end, secretStart, secretEnd int }

// matchAt tries the pattern at the anchor found at s[k].
func (p *pattern) matchAt(s string, k int) (span, bool) {
	if p.boundary && k > 0 && isWordByte(s[k-1]) {
		return span{}, false
	}
	if p.assign && !assignmentAhead(s, k) {
		return span{}, false
	}
	limit := len(s)
	if !p.multiline {
		if nl := strings.IndexByte(s[k:], '\n'); nl >= 0 {
			limit = k + nl
		}
	}
	m := p.re.FindStringSubmatchIndex(s[k:limit])
	if m == nil {
		return span{}, false
	}
	sp := span{start: k, end: k + m[1], secretStart: k, secretEnd: k + m[1]}
	if p.secret > 0 {
		if m[2*p.secret] < 0 {
			return span{}, false
		}
		sp.secretStart, sp.secretEnd = k+m[2*p.secret], k+m[2*p.secret+1]
	}
	if p.check != nil && !p.check(s[sp.start:sp.end], s[sp.secretStart:sp.secretEnd]) {
		return span{}, false
	}
	return sp, true
}

// assignmentAhead reports whether the key starting at s[k] is followed by
// an assignment: the rest of the key, an optional quote, blanks, then ":"
// or "=".
func assignmentAhead(s string, k int) bool {
	i := k
	for i < len(s) && (isWordByte(s[i]) || s[i] == '-') {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i < len(s) && (s[i] == ':' || s[i] == '=')
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// hasPrefixFold reports whether s starts with lower, ignoring ASCII case.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if lowerByte(s[i]) != lower[i] {
			return false
		}
	}
	return true
}
