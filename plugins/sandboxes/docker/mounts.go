package docker

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// maxMounts bounds the masks and read-only binds of one container: each
// is a mount, and a workspace with thousands of denied files is better
// refused than half-masked.
const maxMounts = 256

// hostMount is a path inside the workspace that gets its own mount:
// rel is slash-separated and relative to the workspace root.
type hostMount struct {
	rel string
	dir bool
}

// masks finds what Prepare hides from the container: every entry of the
// workspace whose name is denied (the same name-or-glob rule as
// sandbox.DeniedArgument), not descending into a denied directory. A denied symlink
// is masked where it leads when that is inside the workspace; one leading
// out leads nowhere in the container, where only the workspace is
// mounted. Unreadable directories are skipped: the container runs as the
// same user and cannot read them either.
func masks(root string, denied []string) ([]hostMount, error) {
	if len(denied) == 0 {
		return nil, nil
	}
	var out []hostMount
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if p == root || !sandbox.Denied(denied, e.Name()) {
			return nil
		}
		target, dir := p, e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(p)
			if err != nil || resolved == root || !within(root, resolved) {
				return nil
			}
			fi, err := os.Stat(resolved)
			if err != nil {
				return nil
			}
			target, dir = resolved, fi.IsDir()
		}
		rel, _ := filepath.Rel(root, target)
		out = append(out, hostMount{rel: filepath.ToSlash(rel), dir: dir})
		if e.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look for denied paths in the workspace: %w", err)
	}
	return outermost(out), nil
}

// readOnly maps the policy's read-only paths onto the workspace: relative
// ones are taken inside it, and a path outside it needs nothing, since the
// container sees only the workspace. wholeRoot is set when the workspace
// itself is read-only. A read-only path must exist: docker can only bind
// an existing path.
func readOnly(root, realRoot string, paths []string) (mounts []hostMount, wholeRoot bool, err error) {
	for _, p := range paths {
		host := p
		if !filepath.IsAbs(host) {
			host = filepath.Join(root, host)
		}
		host = filepath.Clean(host)
		if !within(root, host) && !within(realRoot, host) {
			continue
		}
		resolved, err := filepath.EvalSymlinks(host)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("read-only path %s does not exist; docker can bind only an existing path read-only", p)
		} else if err != nil {
			return nil, false, fmt.Errorf("read-only path %s: %w", p, err)
		}
		if !within(realRoot, resolved) {
			continue
		}
		if resolved == realRoot {
			wholeRoot = true
			continue
		}
		fi, err := os.Stat(resolved)
		if err != nil {
			return nil, false, fmt.Errorf("read-only path %s: %w", p, err)
		}
		rel, _ := filepath.Rel(realRoot, resolved)
		mounts = append(mounts, hostMount{rel: filepath.ToSlash(rel), dir: fi.IsDir()})
	}
	return outermost(mounts), wholeRoot, nil
}

// outermost sorts mounts and drops duplicates and any inside another
// directory of the list: it is covered already, and docker could not make
// its mount point inside a read-only mount.
func outermost(ms []hostMount) []hostMount {
	slices.SortFunc(ms, func(a, b hostMount) int { return strings.Compare(a.rel, b.rel) })
	var out []hostMount
	for _, m := range ms {
		covered := false
		for _, o := range out {
			if m.rel == o.rel || (o.dir && strings.HasPrefix(m.rel, o.rel+"/")) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, m)
		}
	}
	return out
}

// dropCovered removes from ms what a mask hides anyway.
func dropCovered(ms, by []hostMount) []hostMount {
	var out []hostMount
	for _, m := range ms {
		if !slices.ContainsFunc(by, func(o hostMount) bool {
			return m.rel == o.rel || (o.dir && strings.HasPrefix(m.rel, o.rel+"/"))
		}) {
			out = append(out, m)
		}
	}
	return out
}

// mountArg is one `--mount` value. The docker CLI reads it as a CSV record
// (opts/mount.go), so a field holding a comma or a quote is quoted.
func mountArg(fields ...string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(fields) // a strings.Builder never fails
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// mountArgs are the `--mount` flags of a container: the workspace, the
// read-only binds inside it, then the masks (/dev/null bound read-only
// over a file, an empty read-only tmpfs over a directory).
func mountArgs(realRoot, workdir string, rootRO bool, ro, mask []hostMount) []string {
	in := func(rel string) string { return path.Join(workdir, rel) }
	ws := []string{"type=bind", "src=" + realRoot, "dst=" + workdir}
	if rootRO {
		ws = append(ws, "readonly")
	}
	args := []string{"--mount", mountArg(ws...)}
	for _, m := range ro {
		args = append(args, "--mount", mountArg("type=bind", "src="+filepath.Join(realRoot, filepath.FromSlash(m.rel)), "dst="+in(m.rel), "readonly"))
	}
	for _, m := range mask {
		if m.dir {
			args = append(args, "--mount", mountArg("type=tmpfs", "dst="+in(m.rel), "readonly"))
		} else {
			args = append(args, "--mount", mountArg("type=bind", "src=/dev/null", "dst="+in(m.rel), "readonly"))
		}
	}
	return args
}

// within reports whether p is root or below it; both are clean.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
