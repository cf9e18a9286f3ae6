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
	// literals replaces every literal secret in one pass; nil when there
	// are none.
	literals *strings.Replacer
	patterns []pattern
	anchors  *anchorSet
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
	// Longest first: at a given position strings.Replacer tries its pairs
	// in argument order, so a secret that extends another wins.
	slices.SortFunc(all, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	all = slices.Compact(all)
	r := &Redactor{}
	r.patterns, r.anchors = compile()
	if len(all) > 0 {
		pairs := make([]string, 0, 2*len(all))
		for _, s := range all {
			pairs = append(pairs, s, Placeholder)
		}
		r.literals = strings.NewReplacer(pairs...)
	}
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
// every recognised credential by "[REDACTED:<kind>]".
func (r *Redactor) String(s string) string {
	if len(s) < MinSecretLen {
		return s
	}
	if r.literals != nil {
		s = r.literals.Replace(s)
	}
	var buf [32]hit
	hits := r.anchors.scan(s, 0, buf[:0])
	for i := range r.patterns {
		if len(hits) == 0 {
			break
		}
		if out := r.patterns[i].apply(s, i, hits); out != s {
			// Offsets moved: find the anchors of the patterns still to run
			// in the new text.
			s = out
			hits = r.anchors.scan(s, i+1, hits[:0])
		}
	}
	return s
}
