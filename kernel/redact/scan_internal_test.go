package redact

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fullString is Redactor.String without its shortcuts: the text is scanned
// again from the start after every change, the way the partial rescan
// must behave.
func (r *Redactor) fullString(s string) string {
	if len(s) < MinSecretLen {
		return s
	}
	if _, lit := r.scan.scan(s, 0, len(s), 0, nil, true); lit >= 0 {
		s = r.scan.replaceLiterals(s, 0)
	}
	for i := range r.patterns {
		hits, _ := r.scan.scan(s, 0, len(s), i, nil, false)
		s, _ = r.patterns[i].apply(s, i, hits)
	}
	return s
}

// scanFragments are what FuzzRescan builds texts from: secrets, keys,
// operators, quotes, line breaks and words that are almost anchors.
var scanFragments = []string{
	"token", "Token", " := ", "=", ": ", `"`, "'", " ", "\n", "\t", "password", "api_key", "secret", "auth",
	"Authorization: Bearer ", "bearer ", "abc123DEF456", "hunter22", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_AbC-dEf",
	"ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "AKIAIOSFODNN7EXAMPLE", "postgres://u:pw1234@h/db", "://",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n", "-----END RSA PRIVATE KEY-----", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
	"literal-secret-1", "another-secret", "xoxb-1234567890-abc", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
	"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "é", "[REDACTED]", "x", "_", "-",
	`private_key: "zzzz1234"`, "sec", "ret-1", "tok", "en",
}

// FuzzRescan checks that String, which scans again only the lines a
// change touched, redacts exactly as scanning the whole text again after
// every change does.
func FuzzRescan(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 2, 15, 8, 10, 3, 17, 8, 26},
		{23, 8, 24, 8, 16, 2, 17, 9, 27, 22},
		{14, 29, 8, 1, 26, 38, 39, 2, 16, 8, 31, 32, 33},
		{19, 3, 20, 8, 21, 5, 25, 6, 30, 8, 40, 41, 2, 17},
	} {
		f.Add(seed)
	}
	r := New([]string{"literal-secret-1", "another-secret", "sec-ret"}, map[string]string{"MY_TOKEN": "hunter22xx"})
	f.Fuzz(func(t *testing.T, idx []byte) {
		var b strings.Builder
		for _, i := range idx {
			b.WriteString(scanFragments[int(i)%len(scanFragments)])
		}
		in := b.String()
		if got, want := r.String(in), r.fullString(in); got != want {
			t.Errorf("String(%q)\n= %q\nwant %q", in, got, want)
		}
	})
}

// TestCredentialKeyWords keeps credentialKeyWords, which spares running
// the credential expressions on other keys, equal to the keys that
// credentialKeys accepts: a key missing from it would never be redacted.
func TestCredentialKeyWords(t *testing.T) {
	re, err := syntax.Parse(credentialKeys, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range language(t, re.Simplify()) {
		got[strings.ToLower(w)] = true
	}
	want := map[string]bool{}
	for _, w := range credentialKeyWords {
		want[w] = true
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("credentialKeyWords (-) and the keys credentialKeys accepts (+) differ:\n%s", d)
	}
}

// language lists the strings a finite expression matches (one case of
// each letter).
func language(t *testing.T, re *syntax.Regexp) []string {
	t.Helper()
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}
	case syntax.OpEmptyMatch:
		return []string{""}
	case syntax.OpCapture:
		return language(t, re.Sub[0])
	case syntax.OpCharClass:
		var out []string
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		return out
	case syntax.OpQuest:
		return append([]string{""}, language(t, re.Sub[0])...)
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			out = append(out, language(t, sub)...)
		}
		return out
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			var next []string
			for _, a := range out {
				for _, b := range language(t, sub) {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out
	}
	t.Fatalf("credentialKeys uses %v, which this test cannot enumerate", re.Op)
	return nil
}

// TestKeysOfOtherPatterns checks the keys of the patterns that name one
// key: the expression accepts exactly it.
func TestKeysOfOtherPatterns(t *testing.T) {
	for _, s := range specs {
		if s.keys == nil || s.kind == KindCredential {
			continue
		}
		for _, k := range s.keys {
			if !strings.HasPrefix(strings.ToLower(s.expr), "(?i:"+k+`)["']?`) {
				t.Errorf("%s: expression %q does not start with key %q", s.kind, s.expr, k)
			}
		}
	}
}

// TestValuePrechecks checks each pattern's value precheck against its
// expression: no byte the precheck refuses may start a value the
// expression accepts, quoted or bare, on the line (the blanks
// assignmentAhead skips never reach the precheck).
func TestValuePrechecks(t *testing.T) {
	for i, s := range specs {
		if s.value == nil {
			continue
		}
		re := regexp.MustCompile(`\A(?:` + s.expr + `)`)
		for c := 0; c < 256; c++ {
			if s.value(byte(c)) || strings.IndexByte(" \t\f\r", byte(c)) >= 0 {
				continue
			}
			for _, rest := range []string{"abc123def456", "abc123def456\"", "abc123def456'", "x"} {
				in := s.keys[0] + " = " + string([]byte{byte(c)}) + rest
				if line, _, _ := strings.Cut(in, "\n"); re.MatchString(line) {
					t.Errorf("pattern %d (%s): value precheck refuses %q, but %q matches", i, s.kind, rune(c), in)
				}
			}
		}
	}
}
