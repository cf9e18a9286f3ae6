package sandbox

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// ResourceLimit names the first resource limit l asks for beyond the
// timeout and the output cap ("memory", "process count", "disk", "CPU
// time"), or "". A backend that cannot enforce those refuses such calls.
func (l Limits) ResourceLimit() string {
	switch {
	case l.MemoryBytes > 0:
		return "memory"
	case l.MaxPids > 0:
		return "process count"
	case l.DiskBytes > 0:
		return "disk"
	case l.CPUTime > 0:
		return "CPU time"
	}
	return ""
}

// MergeEnv overlays a request's variables on base and returns them as
// sorted NAME=VALUE pairs. A name or value that cannot be put in an
// environment is an error.
func MergeEnv(base, extra map[string]string) ([]string, error) {
	vals := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		vals[k] = v
	}
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("environment variable %q: names must be non-empty without '=' or NUL, values without NUL", k)
		}
		vals[k] = v
	}
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// Denied reports whether any component of the slash-separated path rel
// matches a denied name or glob ("`.env`" denies `src/.env`). Backends
// that copy or mount the workspace leave such paths out.
func Denied(patterns []string, rel string) bool {
	for _, comp := range strings.Split(rel, "/") {
		if comp == "" || comp == "." || comp == ".." {
			continue
		}
		for _, d := range patterns {
			if ok, _ := path.Match(d, comp); ok || comp == d {
				return true
			}
		}
	}
	return false
}

// DeniedArgument returns the first of workdir (relative to the workspace,
// so directories above it do not count) and the words of argv that names
// a denied path, or "". Words inside `sh -c` scripts are checked too.
// This is every backend's seed rule, not isolation: a program that
// computes a path at run time is not stopped by it; backends that can
// also keep denied paths out of the filesystem the command sees.
func DeniedArgument(patterns []string, workdir string, argv []string) string {
	if len(patterns) == 0 {
		return ""
	}
	for _, w := range append([]string{workdir}, argumentWords(argv)...) {
		if Denied(patterns, filepath.ToSlash(w)) {
			return w
		}
	}
	return ""
}

// DeniedPathArgument returns the first of workdir and the words of argv
// that names one of the absolute paths in denied or something below it,
// or "". workdir is absolute; relative words are taken from it, and words
// inside `sh -c` scripts are checked too. It is the seed rule for
// Policy.DenyRead and DenyWrite paths inside the workspace on backends
// that cannot hide them: like DeniedArgument, it does not stop a program
// that computes a path at run time.
func DeniedPathArgument(denied []string, workdir string, argv []string) string {
	if len(denied) == 0 {
		return ""
	}
	for _, w := range append([]string{workdir}, argumentWords(argv)...) {
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(workdir, p)
		}
		p = filepath.Clean(p)
		for _, d := range denied {
			rel, err := filepath.Rel(d, p)
			if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return w
			}
		}
	}
	return ""
}

// argumentWords are the words of argv that may name files: each argument
// whole, and its pieces between shell metacharacters and '='.
func argumentWords(argv []string) []string {
	var words []string
	for _, a := range argv {
		words = append(words, a)
		words = append(words, strings.FieldsFunc(a, func(r rune) bool {
			return strings.ContainsRune(" \t\n;&|<>()'\"`=$", r)
		})...)
	}
	return words
}
