package redact

import (
	"strings"
	"unicode/utf8"
)

// Credential kinds, as they appear in "[REDACTED:<kind>]".
const (
	KindPrivateKey    = "private_key"
	KindAnthropicKey  = "anthropic_key"
	KindOpenAIKey     = "openai_key"
	KindGitHubToken   = "github_token"
	KindAWSAccessKey  = "aws_access_key_id"
	KindAWSSecretKey  = "aws_secret_key"
	KindSlackToken    = "slack_token"
	KindGoogleAPIKey  = "google_api_key"
	KindJWT           = "jwt"
	KindBearerToken   = "bearer_token"
	KindAuthorization = "authorization"
	KindCredential    = "credential"
)

// Placeholder replaces a literal secret and a password in a URL.
const Placeholder = "[REDACTED]"

// patternSpec is one credential shape. The table below is immutable; New
// compiles it into patterns.
//
// A pattern is anchored: it is tried only where one of its anchors occurs
// (case-insensitively), and its expression must match starting there. This
// keeps clean text to a few substring searches and runs each expression on
// one line at a time, instead of scanning all text once per pattern.
type patternSpec struct {
	// kind names the credential in the placeholder; "" means the bare
	// Placeholder.
	kind string
	// anchors are lower-case ASCII literals at which a match starts.
	anchors []string
	// expr is an RE2 expression matched at an anchor. A group named
	// "secret" marks the part that is replaced; without one the whole
	// match is.
	expr string
	// boundary requires a non-word character (or the start of the text)
	// before the anchor.
	boundary bool
	// multiline lets a match run past the end of the anchor's line.
	multiline bool
	// assign says the anchor starts a key that must be followed by an
	// assignment (":" or "="), a cheap test made before the expression.
	assign bool
	// keys, for an assign pattern, are the whole keys (lower case) its
	// expression accepts from the anchor to the end of the key; any other
	// key cannot match, and the expression is not run. Nil: any key.
	keys []string
	// value, for an assign pattern, accepts every byte that can start the
	// value its expression matches after the operator and its blanks; at
	// any other byte the expression is not run. Nil: any byte.
	value func(c byte) bool
	// check, when set, must accept the match and its secret part.
	check func(match, secret string) bool
}

// credentialKeys are the names whose assigned value is a credential, used
// by the generic assignment patterns. A key may carry any prefix
// (DB_PASSWORD, x-api-key) but must end with one of these; credentialAnchors
// are where each of them starts.
const credentialKeys = `(?i:passwd|password|secret|api[_\-]?key|access[_\-]?key|secret[_\-]?key|private[_\-]?key|` +
	`signing[_\-]?key|encryption[_\-]?key|token|credentials?|auth)`

var credentialAnchors = []string{"passw", "secret", "api", "access", "private", "signing", "encryption", "token", "credential", "auth"}

// credentialKeyWords are the keys credentialKeys matches in full, in lower
// case; "?" stands for nothing, "_" or "-", as [_\-]? does.
var credentialKeyWords = separatorVariants("passwd", "password", "secret", "api?key", "access?key", "secret?key",
	"private?key", "signing?key", "encryption?key", "token", "credential", "credentials", "auth")

// separatorVariants expands each "?" of each word into nothing, "_" and
// "-".
func separatorVariants(words ...string) []string {
	var out []string
	for _, w := range words {
		before, after, ok := strings.Cut(w, "?")
		if !ok {
			out = append(out, w)
			continue
		}
		for _, sep := range []string{"", "_", "-"} {
			out = append(out, separatorVariants(before+sep+after)...)
		}
	}
	return out
}

// specs is the pattern table, applied in order: a later pattern sees the
// output of the earlier ones, so more specific shapes come first.
var specs = []patternSpec{
	{
		kind:      KindPrivateKey,
		anchors:   []string{"-----begin"},
		expr:      `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`,
		multiline: true,
	},
	{
		// scheme://user:pass@host → scheme://user:[REDACTED]@host. The
		// password runs to the last @ before a slash or a space.
		anchors: []string{"://"},
		expr:    `://[^\s:/@"'<>]*:(?P<secret>[^\s/"'<>]+)@`,
		check:   func(_, s string) bool { return s != Placeholder },
	},
	{
		kind:     KindAnthropicKey,
		anchors:  []string{"sk-ant-"},
		expr:     `sk-ant-[A-Za-z0-9_\-]{20,}`,
		boundary: true,
	},
	{
		kind:     KindOpenAIKey,
		anchors:  []string{"sk-"},
		expr:     `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`,
		boundary: true,
		// A key is random: it has a digit or a capital. Hyphenated words
		// ("sk-learn-...") do not.
		check: func(m, _ string) bool { return hasDigit(m) || hasUpper(m) },
	},
	{
		kind:     KindGitHubToken,
		anchors:  []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		expr:     `(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b`,
		boundary: true,
	},
	{
		kind:     KindAWSAccessKey,
		anchors:  []string{"akia", "asia"},
		expr:     `(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
		boundary: true,
	},
	{
		kind:    KindAWSSecretKey,
		anchors: []string{"aws_secret_access_key"},
		assign:  true,
		keys:    []string{"aws_secret_access_key"},
		expr:    `(?i:aws_secret_access_key)["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{16,})`,
	},
	{
		kind:     KindSlackToken,
		anchors:  []string{"xox"},
		expr:     `xox[baprs]-[A-Za-z0-9\-]{10,}`,
		boundary: true,
	},
	{
		kind:     KindGoogleAPIKey,
		anchors:  []string{"aiza"},
		expr:     `AIza[0-9A-Za-z_\-]{35}`,
		boundary: true,
	},
	{
		kind:     KindJWT,
		anchors:  []string{"eyj"},
		expr:     `eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`,
		boundary: true,
	},
	{
		kind:     KindBearerToken,
		anchors:  []string{"bearer"},
		expr:     `(?i:bearer)\s+(?P<secret>[A-Za-z0-9\-._~+/]+=*)`,
		boundary: true,
		check:    func(_, s string) bool { return tokenish(s) },
	},
	{
		kind:     KindAuthorization,
		anchors:  []string{"authorization"},
		assign:   true,
		keys:     []string{"authorization"},
		expr:     `(?i:authorization)["']?\s*[:=]\s*["']?(?i:basic|token|bot)\s+(?P<secret>[A-Za-z0-9\-._~+/]+=*)`,
		boundary: true,
		check:    func(_, s string) bool { return len(s) >= 4 },
	},
	{
		// password: "hunter2", "api_key": "…", token='…'
		kind:    KindCredential,
		anchors: credentialAnchors,
		assign:  true,
		keys:    credentialKeyWords,
		value:   func(c byte) bool { return c == '"' || c == '\'' },
		expr:    credentialKeys + `["']?\s*[:=]\s*["'](?P<secret>[^"'\r\n]+)["']`,
		check:   quotedValue,
	},
	{
		// DB_PASSWORD=hunter2, password: hunter22, token = abc123
		kind:    KindCredential,
		anchors: credentialAnchors,
		assign:  true,
		keys:    credentialKeyWords,
		value: func(c byte) bool {
			return c >= utf8.RuneSelf || !strings.ContainsRune(" \t\n\f\r\"'=,;&()<>{}[]$*%|\\`", rune(c))
		},
		expr: credentialKeys + `\s*[:=]\s*(?P<secret>[^\s"'=,;&()<>{}\[\]$*%|\\` + "`" + `]` +
			`[^\s"',;&()<>{}\[\]` + "`" + `]*)`,
		check: unquotedValue,
	},
}

// placeholders are values that stand for a secret rather than being one.
var placeholders = map[string]bool{
	"string": true, "str": true, "bool": true, "boolean": true, "int": true, "null": true, "nil": true,
	"none": true, "true": true, "false": true, "undefined": true, "required": true, "optional": true,
	"password": true, "passwd": true, "secret": true, "token": true, "empty": true, "redacted": true,
	"changeme": true, "xxxx": true, "xxxxxxxx": true,
}

// quotedValue accepts a quoted assignment value that is not a placeholder,
// a template ("${X}", "<your key>", "%s") or already redacted.
func quotedValue(_, v string) bool {
	if len(v) < 4 || placeholders[strings.ToLower(v)] {
		return false
	}
	return !strings.ContainsAny(v[:1], "$<{[*%")
}

// unquotedValue accepts an unquoted assignment value. In KEY=value form
// (env files, query strings, flags) any non-placeholder counts; with spaces
// around the operator ("password: x", "token = y", the shape of code) the
// value must look random — a digit or a symbol — so identifiers, types and
// field paths are left alone.
func unquotedValue(m, v string) bool {
	if len(v) < 4 || placeholders[strings.ToLower(v)] || allDigits(v) || identPath(v) {
		return false
	}
	op := strings.IndexAny(m[:len(m)-len(v)], ":=")
	tight := op > 0 && !strings.ContainsAny(m[op-1:len(m)-len(v)], " \t")
	if tight {
		return true
	}
	return len(v) >= 6 && (hasDigit(v) || hasSymbol(v))
}

// tokenish reports whether s looks like a random token rather than a word:
// at least 8 characters with a digit, a symbol, or mixed case beyond an
// initial capital.
func tokenish(s string) bool {
	if len(s) < 8 {
		return false
	}
	if hasDigit(s) || hasSymbol(s) {
		return true
	}
	upper, lower := 0, 0
	for _, c := range s[1:] {
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		}
	}
	return upper >= 1 && lower >= 1
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func hasUpper(s string) bool { return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") }

func hasSymbol(s string) bool { return strings.ContainsAny(s, "-_.+/=~!@#^&?") }

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// identPath reports whether s is a dotted field path without digits
// (cfg.Password, os.Getenv, self.token): code, not a value.
func identPath(s string) bool {
	if hasDigit(s) {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for i, c := range part {
			letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
			if !letter && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return strings.Contains(s, ".")
}
