package redact

import (
	"net/url"
	"slices"
	"strings"
)

// MinSecretLen is the shortest literal secret New accepts: a shorter value
// protects nothing and would shred ordinary text.
const MinSecretLen = 4

// MinEnvSecretLen is the shortest environment value New treats as a
// secret, so that TOKEN_TTL=1 does not redact every "1".
const MinEnvSecretLen = 8

// envCredentialWords mark an environment variable whose value is a secret.
var envCredentialWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PRIVATE"}

// envNotSecret are variables whose names contain a credential word but whose
// values are not secrets (and appear in ordinary output, like git's author).
var envNotSecret = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"SSH_AUTH_SOCK": true, "XAUTHORITY": true, "KEYTIMEOUT": true,
}

// Redactor hides secrets in strings and JSON documents. It is immutable and
// safe for concurrent use.
type Redactor struct {
	patterns []pattern
	// scan finds the literal secrets and the patterns' anchors.
	scan *scanner
}

// New returns a Redactor for the literal secrets (sensitive config values,
// API keys) and for the values of env variables whose name looks like a
// credential (it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL,
// AUTH or PRIVATE, in any case). Secrets shorter than [MinSecretLen] and
// env values shorter than [MinEnvSecretLen] are ignored. Either argument
// may be nil: credential patterns apply regardless.
func New(secrets []string, env map[string]string) *Redactor {
	var all []string
	add := func(v string) {
		for _, s := range []string{v, strings.TrimSpace(v)} {
			if len(s) >= MinSecretLen {
				all = append(all, s)
			}
			// A secret in a URL query or form body appears escaped.
			if q := url.QueryEscape(s); q != s && len(s) >= MinSecretLen {
				all = append(all, q)
			}
		}
	}
	for _, s := range secrets {
		add(s)
	}
	for name, v := range env {
		if credentialName(name) && len(strings.TrimSpace(v)) >= MinEnvSecretLen {
			add(v)
		}
	}
	// Longest first: at a given position the longest secret wins.
	slices.SortFunc(all, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	all = slices.Compact(all)
	r := &Redactor{}
	r.patterns, r.scan = compile(all)
	return r
}

// credentialName reports whether an environment variable's name marks its
// value as a credential.
func credentialName(name string) bool {
	up := strings.ToUpper(name)
	if envNotSecret[up] {
		return false
	}
	for _, w := range envCredentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// String returns s with every literal secret replaced by "[REDACTED]" and
// every recognised credential by "[REDACTED:<kind>]". Where occurrences of
// literal secrets overlap, the whole stretch they cover is one
// placeholder.
func (r *Redactor) String(s string) string {
	if len(s) < MinSecretLen {
		return s
	}
	var buf, spare [32]hit
	hits, lit := r.scan.scan(s, 0, len(s), 0, buf[:0], true)
	if lit >= 0 {
		// The scan stopped at the first secret: scan the rest again once
		// the secrets are replaced.
		line := lineStart(s, lit)
		s = r.scan.replaceLiterals(s, lit)
		hits = keepBefore(hits[:0], hits, line, 0)
		hits, _ = r.scan.scan(s, line, len(s), 0, hits, false)
	}
	next := spare[:0]
	for i := range r.patterns {
		if len(hits) == 0 {
			break
		}
		out, ch := r.patterns[i].apply(s, i, hits)
		if ch.first < 0 {
			continue
		}
		next = r.rescan(out, next[:0], hits, ch, len(out)-len(s), i+1)
		s, hits, next = out, next, hits
	}
	return s
}

// rescan appends to dst the hits in s for patterns numbered from on,
// given old, the hits in the text before ch changed it into s (delta
// longer). A hit depends only on its own line (the anchor, the byte
// before it, the key and operator after it), so only the lines ch touched
// are scanned again; the hits before them are kept, and those after them
// are moved by delta.
func (r *Redactor) rescan(s string, dst, old []hit, ch change, delta, from int) []hit {
	start, end := lineStart(s, ch.first), len(s)
	if nl := strings.IndexByte(s[ch.last:], '\n'); nl >= 0 {
		end = ch.last + nl
	}
	dst = keepBefore(dst, old, start, from)
	dst, _ = r.scan.scan(s, start, end, from, dst, false)
	for _, h := range old {
		if h.pos > end-delta && h.pattern >= from {
			dst = append(dst, hit{h.pos + delta, h.pattern})
		}
	}
	return dst
}

// keepBefore appends to dst the hits of hits before pos for patterns
// numbered from on. dst may share hits' array.
func keepBefore(dst, hits []hit, pos, from int) []hit {
	for _, h := range hits {
		if h.pos >= pos {
			break
		}
		if h.pattern >= from {
			dst = append(dst, h)
		}
	}
	return dst
}

// lineStart returns the start of the line that holds s[i].
func lineStart(s string, i int) int { return strings.LastIndexByte(s[:i], '\n') + 1 }
