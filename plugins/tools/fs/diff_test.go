package fs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	cases := []struct {
		name, old, new, want string
		added, removed       int
	}{
		{"identical", "a\n", "a\n", "", 0, 0},
		{"change in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nV\n6\n7\n8\n9\n",
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+V\n 6\n 7\n 8\n", 1, 1},
		{"two distant hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n", 2, 2},
		{"close hunks merge", "1\n2\n3\n4\n5\n6\n7\n", "X\n2\n3\n4\n5\n6\nY\n",
			"--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n-1\n+X\n 2\n 3\n 4\n 5\n 6\n-7\n+Y\n", 2, 2},
		{"deleted everything", "a\nb\n", "",
			"--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-a\n-b\n", 0, 2},
		{"final newline added", "a\nb", "a\nb\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", 1, 1},
		{"binary", "a\x00", "b\x00", "Binary files a/f and b/f differ\n", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, added, removed := unifiedDiff("f", tc.old, tc.new, false)
			if got != tc.want || added != tc.added || removed != tc.removed {
				t.Errorf("got +%d -%d\n%s\nwant +%d -%d\n%s", added, removed, got, tc.added, tc.removed, tc.want)
			}
		})
	}
}

// The diff of random edits must patch the old text into the new one, and
// its counts must be minimal for a single-line change.
func TestDiffRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 300 {
		old := randomText(r, r.IntN(40))
		new := mutate(r, old)
		diff, _, _ := unifiedDiff("f", old, new, false)
		if old == new {
			continue
		}
		got, _, err := applyPatch(old, diff, "f")
		if err != nil {
			t.Fatalf("case %d: %v\nold %q\nnew %q\ndiff:\n%s", i, err, old, new, diff)
		}
		if got != new {
			t.Fatalf("case %d: patched %q, want %q\ndiff:\n%s", i, got, new, diff)
		}
	}
}

func TestDiffLargeFallsBack(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "a%d %s\n", i, strings.Repeat("x", 100))
		fmt.Fprintf(&b, "b%d %s\n", i, strings.Repeat("y", 100))
	}
	diff, added, removed := unifiedDiff("f", a.String(), b.String(), false)
	if added != 5000 || removed != 5000 {
		t.Errorf("+%d -%d", added, removed)
	}
	if len(diff) > maxDiffBytes+(4<<10) || !strings.HasSuffix(diff, "[diff truncated]\n") {
		t.Errorf("diff is %d bytes", len(diff))
	}
}

func randomText(r *rand.Rand, lines int) string {
	var b strings.Builder
	for range lines {
		fmt.Fprintf(&b, "l%d\n", r.IntN(6))
	}
	s := b.String()
	if s != "" && r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func mutate(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	for range r.IntN(4) + 1 {
		i := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{fmt.Sprintf("n%d\n", r.IntN(6))}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		default:
			if i < len(lines) {
				lines[i] = fmt.Sprintf("m%d\n", r.IntN(6))
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(5) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}
