package main

import (
	"slices"
	"testing"
)

// Tokens are unescaped in RFC 6901's order (~1 before ~0), and String
// writes them back the way they were written.
func TestParsePointer(t *testing.T) {
	tests := []struct {
		in   string
		want pointer
	}{
		{"", pointer{}},
		{"/", pointer{""}},
		{"/a/b", pointer{"a", "b"}},
		{"/a~1b", pointer{"a/b"}},
		{"/m~0n", pointer{"m~n"}},
		{"/~01", pointer{"~1"}},
		{"/~10", pointer{"/0"}},
		{"/a//b", pointer{"a", "", "b"}},
		{"/ spaces /0", pointer{" spaces ", "0"}},
	}
	for _, tc := range tests {
		got, err := parsePointer(tc.in)
		if err != nil {
			t.Errorf("parsePointer(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("parsePointer(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("parsePointer(%q).String() = %q, want it back", tc.in, got.String())
		}
	}
}
