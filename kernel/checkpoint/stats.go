package checkpoint

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Stat sums up the changes made after a checkpoint, until the next
// checkpoint of the same run: what the batch it was taken before did.
type Stat struct {
	Files, Added, Deleted int
}

// String is "2 files +3 −1".
func (s Stat) String() string {
	noun := "files"
	if s.Files == 1 {
		noun = "file"
	}
	return fmt.Sprintf("%d %s +%d −%d", s.Files, noun, s.Added, s.Deleted)
}

// Stats returns, by checkpoint commit, what changed between it and the
// run's next checkpoint. A run's checkpoints form one commit chain, so a
// single git log answers for all of them; the newest checkpoint of each
// run has no entry.
func (s *Store) Stats(ctx context.Context) (map[string]Stat, error) {
	out, err := s.git(ctx, nil, "log", "--numstat", "--no-renames", "--format=%x00%H %P", "--glob="+strings.TrimSuffix(RefPrefix, "/")+"/*")
	if err != nil {
		return nil, fmt.Errorf("checkpoint stats: %w", err)
	}
	stats := map[string]Stat{}
	for _, rec := range strings.Split(out, "\x00") {
		header, body, _ := strings.Cut(rec, "\n")
		f := strings.Fields(header)
		if len(f) < 2 {
			continue // a chain's first checkpoint has nothing before it
		}
		var st Stat
		for _, line := range strings.Split(body, "\n") {
			cols := strings.SplitN(line, "\t", 3)
			if len(cols) != 3 {
				continue
			}
			st.Files++
			a, _ := strconv.Atoi(cols[0]) // "-" for binary files counts 0
			d, _ := strconv.Atoi(cols[1])
			st.Added += a
			st.Deleted += d
		}
		stats[f[1]] = st
	}
	return stats, nil
}
