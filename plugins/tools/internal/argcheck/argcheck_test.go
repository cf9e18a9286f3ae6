package argcheck

import "testing"

func TestInt(t *testing.T) {
	ptr := func(n int) *int { return &n }
	cases := []struct {
		name string
		v    *int
		want int
		err  string
	}{
		{"absent is the default", nil, 7, ""},
		{"low end", ptr(1), 1, ""},
		{"high end", ptr(5), 5, ""},
		{"below", ptr(0), 0, "depth must be 1 to 5, got 0"},
		{"above", ptr(6), 0, "depth must be 1 to 5, got 6"},
	}
	for _, tc := range cases {
		got, err := Int("depth", tc.v, 7, 1, 5)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: Int = %d, %v; want %d, %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}
