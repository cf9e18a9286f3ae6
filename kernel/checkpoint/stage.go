package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxListedPaths is how many changed paths are staged by name; beyond it
// (a first checkpoint, a big generated change) one `add -A .` is cheaper
// than git matching every path against every pathspec.
const maxListedPaths = 512

// snapshotTree stages the workspace into the private index and writes it
// as a tree. Files above the size cap are kept out of the index (and
// dropped from it, should an earlier, smaller version be there) and
// returned, sorted as git lists them.
//
// The workspace is walked once: git lists what is new, modified or
// deleted against the private index (whose stat cache makes that cheap),
// and only those paths are staged.
func (s *Store) snapshotTree(ctx context.Context) (tree string, skipped []string, err error) {
	if _, err := os.Stat(s.ws); err != nil {
		return "", nil, fmt.Errorf("workspace %s: %w", s.ws, err)
	}
	out, err := s.git(ctx, nil, "ls-files", "-z", "--others", "--modified", "--exclude-standard")
	if err != nil {
		return "", nil, err
	}
	changed, skipped, err := s.partition(out)
	if err != nil {
		return "", nil, err
	}
	switch {
	case len(changed) == 0:
	case len(changed) > maxListedPaths:
		specs := ".\x00"
		for _, p := range skipped {
			specs += ":(exclude,literal)" + p + "\x00"
		}
		if _, err := s.git(ctx, []byte(specs), "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return "", nil, err
		}
	default:
		// Literal pathspecs on stdin: no argv limit, no glob surprises in names.
		if _, err := s.git(ctx, []byte(strings.Join(changed, "\x00")+"\x00"),
			"--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return "", nil, err
		}
	}
	if len(skipped) > 0 {
		if _, err := s.git(ctx, []byte(strings.Join(skipped, "\x00")+"\x00"), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return "", nil, err
		}
	}
	tree, err = s.git(ctx, nil, "write-tree")
	return tree, skipped, err
}

// partition splits the paths git listed into those to stage and the
// regular files larger than the cap, which are left out.
func (s *Store) partition(lsFiles string) (changed, big []string, err error) {
	seen := map[string]bool{}
	for _, rel := range strings.Split(lsFiles, "\x00") {
		if rel == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		if s.maxSize >= 0 {
			fi, err := os.Lstat(filepath.Join(s.ws, filepath.FromSlash(rel)))
			switch {
			case errors.Is(err, os.ErrNotExist):
				// deleted: staging the path records the deletion
			case err != nil:
				return nil, nil, fmt.Errorf("stat %s: %w", rel, err)
			case fi.Mode().IsRegular() && fi.Size() > s.maxSize:
				big = append(big, rel)
				continue
			}
		}
		changed = append(changed, rel)
	}
	return changed, big, nil
}
