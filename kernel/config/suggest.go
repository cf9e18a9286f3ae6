package config

import (
	"fmt"
	"strings"
)

// Nearest returns the candidate closest to name by Levenshtein distance,
// or "" when none is within a distance of about a third of its length
// (at least 2). Config diagnostics and the CLI's unknown-verb message both
// use it, so hints read the same everywhere.
func Nearest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := levenshtein(strings.ToLower(name), strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := max(2, len(name)/3)
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// didYouMean returns ` Did you mean "x"?` for the nearest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if s := Nearest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// levenshtein is the edit distance between a and b, by runes.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
