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
	multiline bool
	check     func(match, secret string) bool
}

// anchor is one literal at which a pattern is tried, with the pattern's
// checks that depend only on the text around the anchor.
type anchor struct {
	text    string // lower-case ASCII, at least three bytes, no newline
	pattern int
	// boundary, assign, keys and value are the pattern's (see
	// patternSpec).
	boundary, assign bool
	keys             map[string]bool
	value            func(c byte) bool
}

// maxKeyLen bounds the keys of patternSpec.keys.
const maxKeyLen = 32

// scanner finds, in one pass over a text, where a literal secret starts
// and every anchor of every pattern (case-insensitively), without
// allocating a lower-cased copy.
type scanner struct {
	// anchors lists the anchors by their first byte.
	anchors [256][]anchor
	// literals lists the literal secrets by their first byte, longest
	// first.
	literals [256][]string
	// pairs has bit a<<8|b set when a literal secret, or an anchor in any
	// ASCII case, starts with the bytes a, b; next has bit b<<8|c set when
	// the second and third bytes of one, in lower case, are b, c. Every
	// anchor and secret is at least three bytes long, and most positions
	// of a text are passed over after these two tests.
	pairs, next [1 << 16 / 64]uint64
}

// hit is an anchor found at pos whose pattern's boundary and assignment
// checks passed there.
type hit struct {
	pos     int
	pattern int
}

// compile turns the table into patterns and a scanner for them and for
// the literal secrets, which must be sorted longest first and be at least
// three bytes long (anchors are too).
func compile(literals []string) ([]pattern, *scanner) {
	out := make([]pattern, 0, len(specs))
	sc := &scanner{}
	for i, s := range specs {
		re := regexp.MustCompile(`\A(?:` + s.expr + `)`)
		label := Placeholder
		if s.kind != "" {
			label = "[REDACTED:" + s.kind + "]"
		}
		out = append(out, pattern{re: re, label: label, secret: max(re.SubexpIndex("secret"), 0),
			multiline: s.multiline, check: s.check})
		var keys map[string]bool
		if s.keys != nil {
			keys = map[string]bool{}
			for _, k := range s.keys {
				keys[k] = true
			}
		}
		for _, a := range s.anchors {
			if len(a) < 3 || a != strings.ToLower(a) || strings.Contains(a, "\n") {
				panic("redact: anchor " + a + " is not three or more lower-case bytes on one line")
			}
			sc.anchors[a[0]] = append(sc.anchors[a[0]], anchor{a, i, s.boundary, s.assign, keys, s.value})
			for _, c0 := range caseVariants(a[0]) {
				for _, c1 := range caseVariants(a[1]) {
					setBit(&sc.pairs, c0, c1)
				}
			}
			setBit(&sc.next, a[1], a[2])
		}
	}
	for _, l := range literals {
		sc.literals[l[0]] = append(sc.literals[l[0]], l)
		setBit(&sc.pairs, l[0], l[1])
		setBit(&sc.next, lowerByte(l[1]), lowerByte(l[2]))
	}
	return out, sc
}

func setBit(set *[1 << 16 / 64]uint64, c0, c1 byte) {
	pair := uint16(c0)<<8 | uint16(c1)
	set[pair/64] |= 1 << (pair % 64)
}

// candidate reports whether a literal secret or an anchor may start at
// s[i], which has two more bytes after it. The first test is written out
// in the loops that call this, where it is cheapest.
func (sc *scanner) candidate(s string, i int) bool {
	pair := uint16(lowerByte(s[i+1]))<<8 | uint16(lowerByte(s[i+2]))
	return sc.next[pair/64]&(1<<(pair%64)) != 0
}

// caseVariants returns c and, for a lower-case ASCII letter, its upper
// case.
func caseVariants(c byte) []byte {
	if c >= 'a' && c <= 'z' {
		return []byte{c, c - ('a' - 'A')}
	}
	return []byte{c}
}

// scan appends to hits every anchor occurrence in s[start:end], in
// position order, for patterns numbered from on. With literals set it
// stops at the first literal secret and returns its position (the hits
// found so far are then incomplete); otherwise, and when there is none,
// it returns -1.
func (sc *scanner) scan(s string, start, end, from int, hits []hit, literals bool) ([]hit, int) {
	// keyEnd, value and assigned are the last assignment check's: an
	// anchor before keyEnd is in the same key and gets the same answer,
	// so a long run of key characters is read once, not once per anchor.
	keyEnd, value, assigned := -1, 0, false
	end = min(end, len(s)-2)
	for i := start; i < end; i++ {
		if pair := uint16(s[i])<<8 | uint16(s[i+1]); sc.pairs[pair/64]&(1<<(pair%64)) == 0 || !sc.candidate(s, i) {
			continue
		}
		if literals && sc.literalAt(s, i) > 0 {
			return hits, i
		}
		c0, c1, c2 := lowerByte(s[i]), lowerByte(s[i+1]), lowerByte(s[i+2])
		for k := range sc.anchors[c0] {
			an := &sc.anchors[c0][k]
			if an.pattern < from || an.text[1] != c1 || an.text[2] != c2 || !hasPrefixFold(s[i:], an.text) {
				continue
			}
			if an.boundary && i > 0 && isWordByte(s[i-1]) {
				continue
			}
			if an.assign {
				if i >= keyEnd {
					keyEnd, value, assigned = assignmentAhead(s, i)
				}
				if !assigned || an.keys != nil && !isKey(an.keys, s[i:keyEnd]) ||
					an.value != nil && (value == len(s) || !an.value(s[value])) {
					continue
				}
			}
			hits = append(hits, hit{i, an.pattern})
		}
	}
	return hits, -1
}

// literalAt returns the length of the longest literal secret at s[i:], 0
// when none starts there.
func (sc *scanner) literalAt(s string, i int) int {
	for _, l := range sc.literals[s[i]] {
		if strings.HasPrefix(s[i:], l) {
			return len(l)
		}
	}
	return 0
}

// replaceLiterals returns s with every stretch of text that literal
// secrets cover replaced by Placeholder; no secret starts before from.
// Occurrences that overlap form one stretch, so no part of either secret
// is left; occurrences that merely touch stay two placeholders.
func (sc *scanner) replaceLiterals(s string, from int) string {
	var b strings.Builder
	b.Grow(len(s))
	last, start, end := 0, -1, -1
	for i := from; i+2 < len(s); i++ {
		if start >= 0 && i >= end {
			b.WriteString(s[last:start])
			b.WriteString(Placeholder)
			last, start = end, -1
		}
		if pair := uint16(s[i])<<8 | uint16(s[i+1]); sc.pairs[pair/64]&(1<<(pair%64)) == 0 || !sc.candidate(s, i) {
			continue
		}
		if n := sc.literalAt(s, i); n > 0 {
			if start < 0 {
				start = i
			}
			end = max(end, i+n)
		}
	}
	if start >= 0 {
		b.WriteString(s[last:start])
		b.WriteString(Placeholder)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// change is where apply changed a text: the new text is the same as the
// old before first and from last on (shifted by the change in length).
// first is -1 when nothing changed.
type change struct{ first, last int }

// apply replaces every accepted match of pattern number idx in s, trying
// it at its hits, and says where the new text differs.
func (p *pattern) apply(s string, idx int, hits []hit) (string, change) {
	var b strings.Builder
	last, reach := 0, 0
	ch := change{first: -1}
	// lineEnd is the end of the line of the last hit tried: hits come in
	// position order, so a long line is searched for its end once.
	lineEnd := -1
	for _, h := range hits {
		if h.pattern != idx || h.pos < reach {
			continue
		}
		limit := len(s)
		if !p.multiline {
			if h.pos >= lineEnd {
				lineEnd = len(s)
				if nl := strings.IndexByte(s[h.pos:], '\n'); nl >= 0 {
					lineEnd = h.pos + nl
				}
			}
			limit = lineEnd
		}
		sp, ok := p.matchAt(s, h.pos, limit)
		if !ok {
			continue
		}
		if ch.first < 0 {
			b.Grow(len(s))
			ch.first = sp.secretStart
		}
		b.WriteString(s[last:sp.secretStart])
		b.WriteString(p.label)
		last, reach = sp.secretEnd, sp.end
		ch.last = b.Len()
	}
	if ch.first < 0 {
		return s, ch
	}
	b.WriteString(s[last:])
	return b.String(), ch
}

// span is an accepted match: the whole match and the part to replace.
type span struct{ start, end, secretStart, secretEnd int }

// matchAt tries the pattern at the hit at s[k], whose boundary and
// assignment checks have passed; the match ends by s[limit].
func (p *pattern) matchAt(s string, k, limit int) (span, bool) {
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
// or "=". It also returns where the rest of the key ends, which is the
// same for every k inside that key, and so are the other answers; and
// where the value starts, after the operator and the blanks (as \s
// matches them on one line) that follow it.
func assignmentAhead(s string, k int) (keyEnd, value int, ok bool) {
	i := k
	for i < len(s) && (isWordByte(s[i]) || s[i] == '-') {
		i++
	}
	keyEnd = i
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == len(s) || (s[i] != ':' && s[i] != '=') {
		return keyEnd, i, false
	}
	for i++; i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f' || s[i] == '\r'); i++ {
	}
	return keyEnd, i, true
}

// isKey reports whether key, in lower case, is in keys.
func isKey(keys map[string]bool, key string) bool {
	if len(key) > maxKeyLen {
		return false
	}
	var buf [maxKeyLen]byte
	for i := 0; i < len(key); i++ {
		buf[i] = lowerByte(key[i])
	}
	return keys[string(buf[:len(key)])]
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
