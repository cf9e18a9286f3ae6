package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Restore puts the workspace back to target: changed and deleted files
// come back, files created since are removed, ignored files are left
// alone. It first snapshots the current state (returned), so the restore
// itself can be undone.
func (s *Store) Restore(ctx context.Context, target Checkpoint, runID string) (Checkpoint, error) {
	before, err := s.Create(ctx, Meta{RunID: runID, Summary: "before rewind to " + target.ID})
	if err != nil {
		return Checkpoint{}, fmt.Errorf("rewind: snapshot the current state first: %w", err)
	}
	created, err := s.git(ctx, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--diff-filter=A", target.Tree, before.Tree)
	if err != nil {
		return before, fmt.Errorf("rewind: %w", err)
	}
	if _, err := s.git(ctx, nil, "read-tree", target.Tree); err != nil {
		return before, fmt.Errorf("rewind: %w", err)
	}
	if _, err := s.git(ctx, nil, "checkout-index", "-a", "-f", "-u"); err != nil {
		return before, fmt.Errorf("rewind: %w", err)
	}
	for _, rel := range strings.Split(created, "\x00") {
		if rel == "" {
			continue
		}
		p := filepath.Join(s.ws, filepath.FromSlash(rel))
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return before, fmt.Errorf("rewind: remove %s: %w", rel, err)
		}
		removeEmptyParents(s.ws, filepath.Dir(p))
	}
	// Record where the rewind left the workspace, so later edits by the
	// user can be told apart from it.
	if _, err := s.Create(ctx, Meta{RunID: runID, Summary: "after rewind to " + target.ID}); err != nil {
		return before, fmt.Errorf("rewind: snapshot the result: %w", err)
	}
	return before, nil
}

// removeEmptyParents removes dir and its parents up to root while empty.
func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// Changes lists the files that differ between two checkpoints (or a
// checkpoint and its parent when to is empty) as "A path", "M path",
// "D path".
func (s *Store) Changes(ctx context.Context, from, to Checkpoint) ([]string, error) {
	out, err := s.git(ctx, nil, "diff-tree", "-r", "--name-status", "--no-renames", from.Tree, to.Tree)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			lines = append(lines, strings.Replace(l, "\t", " ", 1))
		}
	}
	return lines, nil
}

// Diff is the unified diff between two checkpoints.
func (s *Store) Diff(ctx context.Context, from, to Checkpoint) (string, error) {
	return s.git(ctx, nil, "diff-tree", "-p", "--no-color", from.Tree, to.Tree)
}
