package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// snapshotTree stages the workspace into the private index and writes it
// as a tree. Files above the size cap are kept out of the index (and
// dropped from it, should an earlier, smaller version be there) and
// returned, sorted as git lists them.
func (s *Store) snapshotTree(ctx context.Context) (tree string, skipped []string, err error) {
	if _, err := os.Stat(s.ws); err != nil {
		return "", nil, fmt.Errorf("workspace %s: %w", s.ws, err)
	}
	skipped, err = s.oversized(ctx)
	if err != nil {
		return "", nil, err
	}
	if len(skipped) == 0 {
		if _, err := s.git(ctx, nil, "add", "-A", "--", "."); err != nil {
			return "", nil, err
		}
	} else {
		// Pathspecs on stdin: no argv limit however many files are skipped.
		specs := ".\x00"
		for _, p := range skipped {
			specs += ":(exclude,literal)" + p + "\x00"
		}
		if _, err := s.git(ctx, []byte(specs), "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return "", nil, err
		}
		if _, err := s.git(ctx, []byte(strings.Join(skipped, "\x00")+"\x00"), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return "", nil, err
		}
	}
	tree, err = s.git(ctx, nil, "write-tree")
	return tree, skipped, err
}

// oversized lists the new or changed files larger than the cap. Only the
// files git reports as new or modified against the private index are
// looked at, so the cost follows the change, not the workspace.
func (s *Store) oversized(ctx context.Context) ([]string, error) {
	if s.maxSize < 0 {
		return nil, nil
	}
	out, err := s.git(ctx, nil, "ls-files", "-z", "--others", "--modified", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var big []string
	seen := map[string]bool{}
	for _, rel := range strings.Split(out, "\x00") {
		if rel == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		fi, err := os.Lstat(filepath.Join(s.ws, filepath.FromSlash(rel)))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted: git add records the deletion
		}
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", rel, err)
		}
		if fi.Mode().IsRegular() && fi.Size() > s.maxSize {
			big = append(big, rel)
		}
	}
	return big, nil
}
