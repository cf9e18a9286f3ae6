package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// credentialLabel replaces the whole value of a member whose name marks a
// credential.
const credentialLabel = "[REDACTED:" + KindCredential + "]"

// JSON returns the document b with every string value passed through
// [Redactor.String]; in addition, the string value of a member whose name
// marks a credential ("password", "api_key", "client_secret", "*_token",
// "authorization", …) is replaced whole by "[REDACTED:credential]" unless it
// is a template such as "${TOKEN}". Object keys, numbers, literals, key
// order and whitespace are kept byte for byte; only changed strings are
// re-encoded. b must be one valid JSON document.
func (r *Redactor) JSON(b []byte) ([]byte, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, fmt.Errorf("redact json: %w", err)
	}
	out := make([]byte, 0, len(b)+16)
	var key []byte // the raw name of the last member seen
	var prev byte  // the last significant byte before the current string
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			out = append(out, b[i:]...)
			break
		}
		if j > 0 {
			chunk := b[i : i+j]
			out = append(out, chunk...)
			if t := bytes.TrimRight(chunk, " \t\r\n"); len(t) > 0 {
				prev = t[len(t)-1]
			}
			i += j
		}
		end := stringEnd(b, i)
		raw := b[i:end]
		switch {
		case nextSignificant(b, end) == ':':
			key = raw
			out = append(out, raw...)
		case prev == ':':
			out = r.appendValue(out, raw, key)
		default:
			out = r.appendValue(out, raw, nil)
		}
		prev = '"'
		i = end
	}
	return out, nil
}

// appendValue appends the redacted form of the raw JSON string value, a
// member of key when key is not nil.
func (r *Redactor) appendValue(out, raw, key []byte) []byte {
	val := unquote(raw)
	red := r.String(val)
	if key != nil && sensitiveKey(unquote(key)) && quotedValue("", red) {
		red = credentialLabel
	}
	if red == val {
		return append(out, raw...)
	}
	return appendQuoted(out, red)
}

// sensitiveNames are member names, lower-cased without separators, whose
// value is a credential; sensitiveSuffixes are endings that mark one.
var (
	sensitiveNames = map[string]bool{
		"auth": true, "authorization": true, "credential": true, "credentials": true, "pass": true,
		"proxyauthorization": true, "cookie": true, "setcookie": true,
	}
	sensitiveSuffixes = []string{
		"password", "passwd", "secret", "apikey", "accesskey", "secretkey", "privatekey",
		"signingkey", "encryptionkey", "token",
	}
)

// sensitiveKey reports whether a member named name holds a credential.
func sensitiveKey(name string) bool {
	n := strings.Map(func(c rune) rune {
		switch c {
		case '_', '-', ' ', '.':
			return -1
		}
		if c >= 'A' && c <= 'Z' {
			return c + ('a' - 'A')
		}
		return c
	}, name)
	if sensitiveNames[n] {
		return true
	}
	for _, s := range sensitiveSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// stringEnd returns the index just past the JSON string that starts at
// b[i] (a quote). b is valid JSON.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// nextSignificant returns the first non-space byte at or after i, or 0.
func nextSignificant(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return b[i]
		}
	}
	return 0
}

// unquote decodes a raw JSON string from a validated document, as
// encoding/json does (a lone surrogate becomes U+FFFD).
func unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	first := bytes.IndexByte(body, '\\')
	if first < 0 {
		return string(body)
	}
	// One allocation: the builder's buffer becomes the string.
	var out strings.Builder
	out.Grow(len(body))
	out.Write(body[:first])
	for i := first; i < len(body); {
		if j := bytes.IndexByte(body[i:], '\\'); j != 0 {
			if j < 0 {
				j = len(body) - i
			}
			out.Write(body[i : i+j])
			i += j
			continue
		}
		i++
		switch e := body[i]; e {
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			rn := hex4(body[i+1:])
			i += 4
			if utf16.IsSurrogate(rn) {
				rn2 := rune(-1)
				if i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
					rn2 = hex4(body[i+3:])
				}
				if dec := utf16.DecodeRune(rn, rn2); dec != utf8.RuneError {
					rn = dec
					i += 6
				} else {
					rn = utf8.RuneError
				}
			}
			out.WriteRune(rn)
		default: // '"', '\\', '/'
			out.WriteByte(e)
		}
		i++
	}
	return out.String()
}

// hex4 decodes the four hex digits at the start of b (validated JSON).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendQuoted(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			out = append(out, s[start:i]...)
			switch c {
			case '"', '\\':
				out = append(out, '\\', c)
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		rn, size := utf8.DecodeRuneInString(s[i:])
		if rn == utf8.RuneError && size == 1 {
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}
