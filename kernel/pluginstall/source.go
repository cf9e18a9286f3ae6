package pluginstall

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// Source is where releases come from: a mirror of static files laid out
// as docs/plugin-distribution.md says, in a directory or on an HTTP(S)
// server. The installer reads files through it and trusts none of them
// until they are checked.
type Source interface {
	// Open opens one file of the mirror: a clean, slash-separated path
	// relative to its root. Reading more than limit bytes fails with a
	// *TooLargeError. A missing file is a *NotFoundError.
	Open(ctx context.Context, path string, limit int64) (io.ReadCloser, error)
	// String names the mirror, a URL or an absolute directory, as
	// messages and the lock file show it.
	String() string
}

// ParseSource picks the kind of mirror from s: an http:// or https:// URL
// is an HTTP mirror with default timeouts, a file:// URL or anything
// without a scheme is a directory (made absolute).
func ParseSource(s string) (Source, error) {
	switch {
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		return NewHTTPSource(s, HTTPConfig{})
	case strings.HasPrefix(s, "file://"):
		return NewDirSource(strings.TrimPrefix(s, "file://"))
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		return nil, fmt.Errorf("plugin mirror %q: scheme %q is not supported (want a directory, http:// or https://)", s, scheme)
	case s == "":
		return nil, fmt.Errorf("plugin mirror: empty location")
	}
	return NewDirSource(s)
}

// NotFoundError says a mirror has no such file.
type NotFoundError struct {
	Mirror string
	Path   string
	// Status is the HTTP status code, "" for a directory mirror.
	Status string
}

func (e *NotFoundError) Error() string {
	if e.Status != "" {
		return fmt.Sprintf("%s: %s not found (%s)", e.Mirror, e.Path, e.Status)
	}
	return fmt.Sprintf("%s: %s not found", e.Mirror, e.Path)
}

// TooLargeError says a file exceeds its size cap.
type TooLargeError struct {
	Mirror string
	Path   string
	Limit  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %s is larger than the %s allowed", e.Mirror, e.Path, byteSize(e.Limit))
}

// capReader fails once more than limit bytes have been read.
type capReader struct {
	r     io.ReadCloser
	left  int64
	limit int64
	src   string
	path  string
}

func newCapReader(r io.ReadCloser, limit int64, src, path string) *capReader {
	return &capReader{r: r, left: limit, limit: limit, src: src, path: path}
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &TooLargeError{Mirror: c.src, Path: c.path, Limit: c.limit}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, &TooLargeError{Mirror: c.src, Path: c.path, Limit: c.limit}
	}
	return n, err
}

func (c *capReader) Close() error { return c.r.Close() }

// fetch reads a whole metadata file of at most limit bytes.
func fetch(ctx context.Context, src Source, path string, limit int64) ([]byte, error) {
	r, err := src.Open(ctx, path, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// checkPath refuses mirror paths that could leave the mirror's root.
func checkPath(src, path string) error {
	if !plugintrust.SafeRel(path) {
		return fmt.Errorf("%s: %q is not a path inside the mirror", src, path)
	}
	return nil
}

// versionPath is a file of one version in a mirror.
func versionPath(name, version, file string) string { return name + "/" + version + "/" + file }

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
