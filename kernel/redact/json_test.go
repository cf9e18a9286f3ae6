package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/redact"
)

func TestJSON(t *testing.T) {
	r := redact.New([]string{"literal-secret-1"}, nil)
	tests := []struct {
		name, in, want string
	}{
		{"untouched", `{"b": 1.50, "a": [true, null, "plain"], "c": {"x": "y"}}`,
			`{"b": 1.50, "a": [true, null, "plain"], "c": {"x": "y"}}`},
		{"value redacted, key kept", `{"literal-secret-1":"literal-secret-1"}`,
			`{"literal-secret-1":"[REDACTED]"}`},
		{"nested pattern", `{"cmd":["curl","-H","Authorization: Bearer abc123def456"]}`,
			`{"cmd":["curl","-H","Authorization: Bearer [REDACTED:bearer_token]"]}`},
		{"sensitive member", `{"password":"hunter","user":"bob"}`,
			`{"password":"[REDACTED:credential]","user":"bob"}`},
		{"sensitive suffix", `{"GITHUB_TOKEN":"plainword","Client-Secret":"abcd"}`,
			`{"GITHUB_TOKEN":"[REDACTED:credential]","Client-Secret":"[REDACTED:credential]"}`},
		{"sensitive template kept", `{"token":"${GITHUB_TOKEN}","password":""}`,
			`{"token":"${GITHUB_TOKEN}","password":""}`},
		{"sensitive member array not whole", `{"password":["plainword"]}`, `{"password":["plainword"]}`},
		{"number under sensitive key", `{"max_tokens":4096,"token":12}`, `{"max_tokens":4096,"token":12}`},
		{"escapes decoded", `{"t":"line1\nliteral-secret-1\t\u00e9"}`, `{"t":"line1\n[REDACTED]\té"}`},
		{"escaped quote kept", `{"t":"say \"hi\"","u":"literal-secret-1 \"q\""}`,
			`{"t":"say \"hi\"","u":"[REDACTED] \"q\""}`},
		{"top-level string", `"literal-secret-1"`, `"[REDACTED]"`},
		{"colon inside string is not a key", `["a:", "literal-secret-1"]`, `["a:", "[REDACTED]"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JSON(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
		})
	}
}

func TestJSONInvalid(t *testing.T) {
	r := redact.New(nil, nil)
	for _, in := range []string{``, `{"a":`, `{"a" 1}`, `"unterminated`} {
		if _, err := r.JSON([]byte(in)); err == nil || !strings.Contains(err.Error(), "redact json") {
			t.Errorf("JSON(%q) error = %v, want a redact json error", in, err)
		}
	}
}

func TestJSONReencodesSpecialCharacters(t *testing.T) {
	r := redact.New([]string{"literal-secret-1"}, nil)
	in, _ := json.Marshal(map[string]string{"t": "literal-secret-1 \x01 \"q\" \\ <b> \xff"})
	got, err := r.JSON(in)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", got, err)
	}
	if want := "[REDACTED] \x01 \"q\" \\ <b> \ufffd"; back["t"] != want {
		t.Errorf("round trip = %q, want %q", back["t"], want)
	}
}
