package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Prune deletes checkpoints taken before cutoff and returns how many. In
// a git workspace the objects they held become unreachable and go with
// the repository's next gc; a shadow repository, which nothing else
// collects, has them removed here (those older than an hour, so a
// snapshot being taken concurrently keeps its objects).
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (n int, err error) {
	defer func() {
		if n > 0 && s.shadow && err == nil {
			if _, perr := s.git(ctx, nil, "prune", "--expire=1.hour.ago"); perr != nil {
				err = fmt.Errorf("prune shadow repository objects: %w", perr)
			}
		}
	}()
	all, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
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
	now, err := s.Current(ctx)
	if err != nil {
		return nil, err
	}
	return s.Changes(ctx, c, now)
}

// Current snapshots the workspace into a tree without recording a
// checkpoint: something to compare checkpoints with.
func (s *Store) Current(ctx context.Context) (Checkpoint, error) {
	tree, skipped, err := s.snapshotTree(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{ID: "workspace", Tree: tree, Time: time.Now(), Meta: Meta{Skipped: skipped}}, nil
}

// Export writes the files of a checkpoint (or any commit of the store's
// repository) into dir, which must exist, through a throwaway index: the
// workspace and the private index are not touched.
func (s *Store) Export(ctx context.Context, commit, dir string) error {
	tmp, err := os.MkdirTemp("", "sparrow-export-")
	if err != nil {
		return fmt.Errorf("export %s: %w", commit, err)
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	if _, err := s.gitIndex(ctx, index, nil, "read-tree", commit); err != nil {
		return fmt.Errorf("export %s: %w", commit, err)
	}
	prefix := strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator)
	if _, err := s.gitIndex(ctx, index, nil, "checkout-index", "-a", "-f", "--prefix="+prefix); err != nil {
		return fmt.Errorf("export %s into %s: %w", commit, dir, err)
	}
	return nil
}

// GitDir is the repository checkpoints are kept in: the workspace's own,
// or the shadow one.
func (s *Store) GitDir() string { return s.gitDir }

// Workspace is the directory the store snapshots.
func (s *Store) Workspace() string { return s.ws }
