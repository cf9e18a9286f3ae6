package local

import (
	"path/filepath"
	"strings"
)

// deniedPath returns the first denied path the workdir (relative to the
// workspace, so directories above it do not count) or any argument
// touches, or "". A denied entry is a name or glob matched against every
// path component ("`.env`" denies `src/.env`, `cat .env` and `.env.local`
// only when listed). Words inside `sh -c` scripts are checked too. This is
// the local backend's seed rule, not isolation: a program that computes a
// path at run time is not stopped; local-hardened and docker enforce paths
// in the filesystem itself.
func deniedPath(denied []string, workdir string, argv []string) string {
	if len(denied) == 0 {
		return ""
	}
	words := []string{workdir}
	for _, a := range argv {
		words = append(words, a)
		words = append(words, strings.FieldsFunc(a, func(r rune) bool {
			return strings.ContainsRune(" \t\n;&|<>()'\"`=$", r)
		})...)
	}
	for _, w := range words {
		for _, comp := range strings.Split(filepath.ToSlash(w), "/") {
			if comp == "" || comp == "." || comp == ".." {
				continue
			}
			for _, d := range denied {
				if ok, _ := filepath.Match(d, comp); ok || comp == d {
					return w
				}
			}
		}
	}
	return ""
}
