package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequiredLiterals(t *testing.T) {
	cases := []struct {
		expr string
		want []string // "~" marks a case-insensitive literal
	}{
		{"func main", []string{"func main"}},
		{`FIXME|TODO\b`, []string{"FIXME", "TODO"}},
		{`FIXME|FOO`, []string{"IXME", "OO"}}, // the parser factors out F
		{`\bhandler\d+\(`, []string{"handler"}},
		{`(foo)+bar?`, []string{"foo"}},
		{`x{2,}yz`, []string{"yz"}},
		{`(?i)todo|fixme`, []string{"~todo", "~fixme"}},
		{`(?i)kind`, []string{"~ind"}},     // k also matches the Kelvin sign
		{`(?i)errors`, []string{"~error"}}, // s also matches the long s
		{`(?i)héllo`, []string{"~llo"}},
		{`(?i)sks`, nil},
		{`[a-z]+\d`, nil},
		{`foo|\d+`, nil},
		{`(foo)?bar*`, []string{"ba"}},
		{`a|b|c|d|e|f|g|h|i`, nil}, // a character class
		{`aa|bb|cc|dd|ee|ff|gg|hh|ii`, nil},
		{`^$`, nil},
		{"a\nb", nil},
		{`\x{FFFD}x`, nil}, // U+FFFD also matches any invalid byte
	}
	for _, tc := range cases {
		var got []string
		for _, l := range requiredLiterals(tc.expr) {
			s := string(l.text)
			if l.fold {
				s = "~" + s
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("requiredLiterals(%q) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

// The literal prefilter and the literal matcher are only shortcuts: for
// every pattern, grep finds the lines regexp finds matching every line.
func TestLiteralLinesMatchEveryLine(t *testing.T) {
	data := []byte(strings.Join([]string{
		"package main", "", "// TODO: one", "func main() {", "\tFIXME x", "}\r", "todo lower", "ToDo mixed TODO",
		"errors.New(\"x\")", "ERRORS", "Kelvin \u212Aind", "kind", "end TODO", "TODOS", "x TODO\r", "café CAFÉ",
		"ab", "aab", "a\tb", "\u017Fession ERROR\u017F", "Session \xff\xfe invalid", "\u00B5 \u039C", "x\u017FKs",
		"last line no newline TODO",
	}, "\n"))
	patterns := []string{
		"TODO", `TODO\b`, `FIXME|TODO\b`, `(?i)todo`, `(?i)errors`, "errors|ERRORS", `(?i)kind`, "kind",
		`TODO$`, `^TODO`, `\bmain\(`, "café", `(?i)café`, "a+b", `(a)+b`, `x TODO`, `TODO\r`, "zzz", "main|last",
		`(?i)session`, `(?i)errors`, `(?i)sks`, `(?i)\x{00B5}`, `\x{FFFD}`, `(?i)SESSION \x{FFFD}`, `invalid\x{FFFD}|\x{FFFD}\x{FFFD}`,
		`[A-Z]{4}`, `^\s*$`,
	}
	for _, p := range patterns {
		for _, ignoreCase := range []bool{false, true} {
			q, err := grepArgs{Pattern: p, IgnoreCase: ignoreCase}.query()
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%q ignore_case=%v", p, ignoreCase)
			_, got := matchLines(data, q)
			plain := q
			plain.lits, plain.quick, plain.whole = nil, nil, nil
			_, want := matchLines(data, plain)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: lines (-every line +prefilter):\n%s", name, diff)
			}
			if len(want) == 0 && p != "zzz" && p != `TODO\r` {
				t.Errorf("%s: matches no line; the corpus should exercise it", name)
			}
		}
	}
}

func TestIndexFold(t *testing.T) {
	cases := []struct {
		data, lit string
		want      int
	}{
		{"xx ErRoRs", "errors", 3},
		{"e E errors", "errors", 4},
		{"error", "errors", -1},
		{"", "ab", -1},
		{"AB", "ab", 0},
		{"a-b", "-b", 1},
	}
	for _, tc := range cases {
		if got := indexFold([]byte(tc.data), []byte(tc.lit)); got != tc.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", tc.data, tc.lit, got, tc.want)
		}
	}
}
