//go:build linux

package localhardened

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// scanDenied walks root for entries whose name is denied, without
// following symlinks and without descending into them.
func scanDenied(root string, patterns []string) []deniedEntry {
	var out []deniedEntry
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if sandbox.Denied(patterns, e.Name()) {
				var st syscall.Stat_t
				if syscall.Lstat(p, &st) == nil {
					out = append(out, deniedEntry{path: p, isDir: e.IsDir(), changed: time.Unix(st.Ctim.Sec, st.Ctim.Nsec)})
				}
				continue
			}
			if e.IsDir() {
				walk(p)
			}
		}
	}
	walk(root)
	return out
}
