package pluginstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// DirSource is a mirror in a local directory.
type DirSource struct{ root string }

// NewDirSource returns the mirror in dir, made absolute. The directory is
// not read until a file is opened.
func NewDirSource(dir string) (*DirSource, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("plugin mirror %s: %w", dir, err)
	}
	return &DirSource{root: abs}, nil
}

// String is the mirror's absolute directory.
func (d *DirSource) String() string { return d.root }

// Open opens a regular file below the directory.
func (d *DirSource) Open(ctx context.Context, path string, limit int64) (io.ReadCloser, error) {
	if err := checkPath(d.root, path); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", d.root, path, err)
	}
	f, err := os.Open(filepath.Join(d.root, filepath.FromSlash(path)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{Mirror: d.root, Path: path}
	}
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %w", d.root, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("%s: %s: %w", d.root, path, err)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s: %s: not a regular file", d.root, path)
	case fi.Size() > limit:
		f.Close()
		return nil, &TooLargeError{Mirror: d.root, Path: path, Limit: limit}
	}
	return newCapReader(ctxReader{ctx, f}, limit, d.root, path), nil
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	f   *os.File
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.f.Read(p)
}

func (r ctxReader) Close() error { return r.f.Close() }

var _ Source = (*DirSource)(nil)
