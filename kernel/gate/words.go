package gate

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// dynamic stands for a part of a word only known at run time ($VAR,
// $(cmd), $((1+1))).
const dynamic = "$…"

// wordText renders a word after quote removal, the way the program will
// receive it; parts only known at run time render as dynamic and make
// static false.
func wordText(w *syntax.Word) (text string, static bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	static = true
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					b.WriteString(dynamic)
					static = false
				}
			}
		case *syntax.ExtGlob:
			b.WriteString(p.Op.String() + p.Pattern.Value + ")")
		default:
			b.WriteString(dynamic)
			static = false
		}
	}
	return b.String(), static
}

// text is wordText without the flag.
func text(w *syntax.Word) string {
	s, _ := wordText(w)
	return s
}

// unescape removes the backslashes the shell would: before any character
// outside quotes, before $ ` " \ and newline inside double quotes (and in
// unquoted here-documents).
func unescape(s string, dq bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !dq || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

// ansiC decodes the body of a $'…' string.
func ansiC(s string) string {
	simple := map[byte]string{'a': "\a", 'b': "\b", 'e': "\x1b", 'E': "\x1b", 'f': "\f", 'n': "\n",
		'r': "\r", 't': "\t", 'v': "\v", '\\': "\\", '\'': "'", '"': "\"", '?': "?"}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		if r, ok := simple[c]; ok {
			b.WriteString(r)
			continue
		}
		digits, base, width := "", 0, 0
		switch {
		case c >= '0' && c <= '7':
			digits, base, width = "01234567", 8, 3
			i--
		case c == 'x':
			digits, base, width = "0123456789abcdefABCDEF", 16, 2
		case c == 'u':
			digits, base, width = "0123456789abcdefABCDEF", 16, 4
		case c == 'U':
			digits, base, width = "0123456789abcdefABCDEF", 16, 8
		case c == 'c' && i+1 < len(s):
			i++
			b.WriteByte(s[i] & 0x1f)
			continue
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(s) && j-i-1 < width && strings.IndexByte(digits, s[j]) >= 0 {
			j++
		}
		n, err := strconv.ParseUint(s[i+1:j], base, 32)
		if err != nil {
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		if c == 'u' || c == 'U' {
			b.WriteString(string(rune(n)))
		} else {
			b.WriteByte(byte(n))
		}
		i = j - 1
	}
	if !utf8.ValidString(b.String()) {
		return strings.ToValidUTF8(b.String(), "?")
	}
	return b.String()
}

// rawWords splits a command line that did not parse into rough words, for
// the denied-path check.
func rawWords(cmd string) []string {
	return strings.FieldsFunc(cmd, func(r rune) bool {
		return strings.ContainsRune(" \t\n;|&<>()`\"'", r)
	})
}
