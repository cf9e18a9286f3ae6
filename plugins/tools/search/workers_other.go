//go:build !wasip1

package search

import "runtime"

// searchWorkers is how many files grep searches at once natively: one per
// CPU, at least two so reads overlap, at most 16.
func searchWorkers() int { return min(max(runtime.GOMAXPROCS(0), 2), 16) }
