package redact

import (
	"encoding/json"
	"testing"
)

// FuzzUnquote checks the hand-written JSON string decoder against
// encoding/json.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{
		`""`, `"plain"`, `"a\nb\tc\\d\"e\/f\bg\fh\ri"`, `"\u00e9\u4e16"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"\ud83dabc"`, `"é世😀"`, `"x\u0000y"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if len(raw) < 2 || raw[0] != '"' || json.Unmarshal([]byte(raw), &want) != nil {
			return
		}
		if stringEnd([]byte(raw), 0) != len(raw) {
			return // not exactly one string token
		}
		if got := unquote([]byte(raw)); got != want && !invalidUTF8(raw) {
			t.Errorf("unquote(%s) = %q, want %q", raw, got, want)
		}
	})
}

// invalidUTF8 reports raw bytes that encoding/json replaces but unquote
// keeps (both are then re-encoded the same way).
func invalidUTF8(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' {
			return true
		}
	}
	return false
}
