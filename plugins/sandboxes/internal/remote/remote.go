// Package remote holds what the backends that run commands somewhere
// else (a host over ssh, a vendor's sandbox) share about the paths there.
package remote

import (
	"fmt"
	"path"
	"strings"
)

// Dir maps a request's workdir into the remote workspace root: empty is
// the root, relative is below it, absolute must be inside it. Paths are
// slash-separated whatever the local system.
func Dir(root, dir string) (string, error) {
	orig := dir
	if dir == "" {
		return root, nil
	}
	if !path.IsAbs(dir) {
		dir = path.Join(root, dir)
	}
	dir = path.Clean(dir)
	if dir != root && !strings.HasPrefix(dir, root+"/") {
		return "", fmt.Errorf("workdir %q is outside the workspace %s", orig, root)
	}
	return dir, nil
}
