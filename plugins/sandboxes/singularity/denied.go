package singularity

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Names of the mask sources in a session's scratch directory: an empty
// read-only file bound over denied files, an empty read-only directory
// over denied directories. A regular empty file is used rather than
// /dev/null because Apptainer mounts user binds nodev, where a device node
// cannot even be opened.
const (
	maskFile = "mask-file"
	maskDir  = "mask-dir"
)

// masks finds every denied path present in the workspace and in the
// policy's other bound directories, and returns the read-only binds that
// hide them: the empty file over files, the empty directory over
// directories (their contents go unseen and unwalked). Symlinks are not
// masked: what they point to is either masked itself, outside every bind
// (so absent from the container), or not denied. They are found afresh on
// every exec, so a denied file created since the last command is hidden
// too. Subtrees this user cannot read are skipped: the command, running as
// the same user, cannot read them either.
func (s *session) masks() ([]bind, error) {
	if len(s.policy.DeniedPaths) == 0 {
		return nil, nil
	}
	trees := []bind{{src: s.root, dst: s.cfg.Workdir}}
	for _, b := range s.binds {
		if !within(s.root, b.src) {
			trees = append(trees, b)
		}
	}
	var out []bind
	for _, t := range trees {
		err := filepath.WalkDir(t.src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && p != t.src {
					return fs.SkipDir
				}
				return nil
			}
			if p == t.src || !sandbox.Denied(s.policy.DeniedPaths, d.Name()) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			rel, _ := filepath.Rel(t.src, p)
			dst := path.Join(t.dst, filepath.ToSlash(rel))
			if strings.ContainsAny(dst, bindUnsafe) {
				return fmt.Errorf("denied path %s cannot be masked: Apptainer bind specifications cannot carry ':' or ','", p)
			}
			if d.IsDir() {
				out = append(out, bind{src: filepath.Join(s.dir, maskDir), dst: dst, ro: true})
				return fs.SkipDir
			}
			out = append(out, bind{src: filepath.Join(s.dir, maskFile), dst: dst, ro: true})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
