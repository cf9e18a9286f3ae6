package modal

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The workspace travels as a tar stream through the SDK helper: `put`
// writes it to a `tar -x` in the container through ContainerProcess.stdin,
// `get` reads a `tar -c` back. `modal container exec --no-pty` cannot carry
// it: its non-PTY path forwards no stdin and writes the command's stdout
// and stderr together (modal-labs/modal-client modal/cli/container.py,
// StreamType.STDOUT for both; PR #2626).

// denied reports whether any component of rel (slash-separated) matches a
// denied name or glob; such paths are never uploaded nor written back.
func denied(patterns []string, rel string) bool {
	for _, comp := range strings.Split(rel, "/") {
		if comp == "" || comp == "." {
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

// upload copies the workspace, minus denied paths, into the container.
func (m *Modal) upload(ctx context.Context, s *session) error {
	pr, pw := io.Pipe()
	files := map[string]bool{}
	go func() { pw.CloseWithError(writeTar(pw, s.root, s.policy.DeniedPaths, files)) }()
	var errOut bytes.Buffer
	err := m.python(ctx, s.cfg, pr, io.Discard, &errOut, "put", s.sandboxID, s.cfg.Workdir)
	_ = pr.Close()
	if err != nil {
		return fmt.Errorf("upload the workspace: %w", toolError(err, errOut.String(), s.cfg.Python))
	}
	s.synced = files
	return nil
}

// writeTar writes root as a tar stream, skipping denied paths, and
// records the regular files and symlinks it wrote.
func writeTar(w io.Writer, root string, deny []string, files map[string]bool) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if denied(deny, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil // sockets, devices, fifos stay behind
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = rel
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname = "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			files[rel] = true
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		if link != "" {
			files[rel] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// download copies the container's workspace back: new and changed files
// are written, files deleted remotely are deleted locally. Denied paths,
// absolute names, names with "..", and symlinks pointing outside the
// workspace are never written.
func (m *Modal) download(ctx context.Context, s *session) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	got := map[string]bool{}
	go func() {
		err := readTar(pr, s.root, s.policy.DeniedPaths, got)
		_, _ = io.Copy(io.Discard, pr)
		errc <- err
	}()
	var errOut bytes.Buffer
	err := m.python(ctx, s.cfg, nil, pw, &errOut, "get", s.sandboxID, s.cfg.Workdir)
	pw.Close()
	terr := <-errc
	if err != nil {
		return fmt.Errorf("copy the workspace back: %w", toolError(err, errOut.String(), s.cfg.Python))
	}
	if terr != nil {
		return fmt.Errorf("copy the workspace back: %w", terr)
	}
	for rel := range s.synced {
		if !got[rel] && !denied(s.policy.DeniedPaths, rel) {
			p := filepath.Join(s.root, filepath.FromSlash(rel))
			if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
				_ = os.Remove(p)
			}
		}
	}
	s.synced = got
	return nil
}

// readTar extracts a tar stream into root and records the regular files
// and symlinks it holds.
func readTar(r io.Reader, root string, deny []string, got map[string]bool) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		rel := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if rel == "." || rel == "" {
			continue
		}
		if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || denied(deny, rel) {
			continue
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if !insideReal(root, filepath.Dir(dst)) {
			continue // a parent is a symlink leading out
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			got[rel] = true
			if err := writeFile(dst, tr, h); err != nil {
				return err
			}
		case tar.TypeSymlink:
			target := path.Join(path.Dir(rel), h.Linkname)
			if path.IsAbs(h.Linkname) || target == ".." || strings.HasPrefix(target, "../") {
				continue
			}
			got[rel] = true
			if cur, err := os.Readlink(dst); err == nil && cur == h.Linkname {
				continue
			}
			_ = os.RemoveAll(dst)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return err
			}
		}
	}
}

// writeFile writes a regular file unless it already holds these bytes.
func writeFile(dst string, r io.Reader, h *tar.Header) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(dst); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if cur, err := os.ReadFile(dst); err == nil && bytes.Equal(cur, data) {
			return nil
		}
	} else if err == nil {
		_ = os.RemoveAll(dst) // a symlink or directory becomes a file
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, fs.FileMode(h.Mode)&0o777)
}

// insideReal reports whether dir, with symlinks resolved as far as it
// exists, is root or below it.
func insideReal(root, dir string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	for p := dir; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			rel, err := filepath.Rel(realRoot, r)
			return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

// stdinTar wraps data as a one-file tar stream named name.
func stdinTar(name string, data []byte) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(data)
	_ = tw.Close()
	return b.Bytes()
}
