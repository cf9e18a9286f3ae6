package checkpoint

import (
	"context"
	"fmt"
	"time"
)

// Prune deletes checkpoints taken before cutoff and returns how many. The
// objects they held become unreachable and go with git's next gc.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	all, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range all {
		if !c.Time.Before(cutoff) {
			continue
		}
		if _, err := s.git(ctx, nil, "update-ref", "-d", c.Ref); err != nil {
			return n, fmt.Errorf("prune %s: %w", c.ID, err)
		}
		n++
	}
	return n, nil
}

// Dirty lists the files that differ between the workspace and checkpoint c
// ("M path", "A path", "D path"), without recording anything.
func (s *Store) Dirty(ctx context.Context, c Checkpoint) ([]string, error) {
	if _, err := s.git(ctx, nil, "add", "-A", "--", "."); err != nil {
		return nil, err
	}
	tree, err := s.git(ctx, nil, "write-tree")
	if err != nil {
		return nil, err
	}
	return s.Changes(ctx, c, Checkpoint{Tree: tree})
}
