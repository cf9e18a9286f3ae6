package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// jsonFile is a JSON file in the workspace, read with what a rewrite must
// keep of its layout.
type jsonFile struct {
	// rel is the path as the model gave it, cleaned; abs is where it is.
	rel, abs string
	root     any
	perm     fs.FileMode
	// indent is one level of indentation; nl the line ending; final
	// whether the file ended with one; bom whether it began with a UTF-8
	// byte order mark.
	indent, nl string
	final, bom bool
}

var utf8BOM = []byte("\xef\xbb\xbf")

// resolve joins the workspace-relative path rel onto workspace, refusing
// what would leave it. The host confines the module to the workspace
// anyway; this says so in words the model can act on.
func resolve(workspace, rel string) (clean, abs string, err error) {
	switch {
	case rel == "":
		return "", "", errors.New("path is required: a JSON file relative to the workspace, such as \"package.json\"")
	case workspace == "":
		return "", "", errors.New("this call has no workspace, so there are no files to read")
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/"):
		return "", "", fmt.Errorf("path %q is absolute; give it relative to the workspace, such as \"package.json\"", rel)
	}
	clean = filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", "", fmt.Errorf("path %q leaves the workspace; give a path inside it", rel)
	}
	return filepath.ToSlash(clean), filepath.Join(workspace, clean), nil
}

// readJSONFile reads and decodes the file at rel in workspace.
func readJSONFile(workspace, rel string) (*jsonFile, error) {
	rel, abs, err := resolve(workspace, rel)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist in the workspace", rel)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", rel, unwrapPath(err))
	case info.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a JSON file", rel)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", rel, unwrapPath(err))
	}
	f := &jsonFile{rel: rel, abs: abs, perm: info.Mode().Perm(), nl: "\n"}
	if f.bom = bytes.HasPrefix(data, utf8BOM); f.bom {
		data = data[len(utf8BOM):]
	}
	if f.root, err = decode(data); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if bytes.Contains(data, []byte("\r\n")) {
		f.nl = "\r\n"
	}
	f.final = bytes.HasSuffix(data, []byte("\n"))
	f.indent = detectIndent(data)
	return f, nil
}

// detectIndent is the indentation of the first indented line: a tab, or
// that many spaces. A file with no indented line gets two spaces.
func detectIndent(data []byte) string {
	for _, line := range strings.Split(string(data), "\n")[1:] {
		ws := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if ws == "" || strings.TrimSpace(line) == "" {
			continue
		}
		if ws[0] == '\t' {
			return "\t"
		}
		return strings.Repeat(" ", len(ws)-len(strings.TrimLeft(ws, " ")))
	}
	return "  "
}

// encode is the file's new content: its document in its own layout.
func (f *jsonFile) encode() []byte {
	var b bytes.Buffer
	if f.bom {
		b.Write(utf8BOM)
	}
	b.WriteString(format(f.root, f.indent, f.nl))
	if f.final {
		b.WriteString(f.nl)
	}
	return b.Bytes()
}

// write replaces the file atomically: the new content goes to a temporary
// file in the same directory, which is then renamed over the old one, so
// a reader sees the old file or the new one, never half of either.
func (f *jsonFile) write() error {
	// Through a symbolic link, replace its target and keep the link. The
	// host keeps the target inside the workspace.
	target, err := filepath.EvalSymlinks(f.abs)
	if err != nil {
		return f.writeError(err)
	}
	dir, base := filepath.Split(target)
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return f.writeError(err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(f.encode()); err != nil {
		return f.writeError(err)
	}
	if err := tmp.Sync(); err != nil {
		return f.writeError(err)
	}
	if err := tmp.Close(); err != nil {
		return f.writeError(err)
	}
	// Keep the file's permissions (a no-op under WASI, which has none).
	if err := os.Chmod(tmp.Name(), f.perm); err != nil {
		return f.writeError(err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return f.writeError(err)
	}
	done = true
	return nil
}

// writeError words a failed write for the model. Most often the call was
// not allowed to write, and the host mounted the workspace read-only.
func (f *jsonFile) writeError(err error) error {
	if errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("cannot write %s: the workspace is read-only for this call", f.rel)
	}
	return fmt.Errorf("cannot write %s: %v", f.rel, unwrapPath(err))
}

// unwrapPath drops the absolute path from a *fs.PathError: messages name
// the workspace-relative path instead.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
