package pluginstall

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// unpacker extracts one archive into dest, admitting regular files and
// directories only, within caps on entries and bytes.
type unpacker struct {
	dest   string
	entry  string // the plugin's entry file, made executable
	limits limits
	wrap   func(file string, w io.Writer) io.Writer
	// what names the archive in errors.
	what string

	seen    map[string]bool
	total   int64
	written map[string]string // file → SHA-256
}

// unpack extracts the tar.gz from r and returns the SHA-256 of every
// regular file, by slash-separated path.
func (u *unpacker) unpack(r io.Reader) (map[string]string, error) {
	u.seen, u.written = map[string]bool{}, map[string]string{}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip file: %w", u.what, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			return u.written, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not a valid tar archive: %w", u.what, err)
		}
		if n >= u.limits.entries {
			return nil, fmt.Errorf("%s: more than %d entries", u.what, u.limits.entries)
		}
		if err := u.add(hdr, tr); err != nil {
			return nil, fmt.Errorf("%s: %w", u.what, err)
		}
	}
}

// add extracts one entry.
func (u *unpacker) add(hdr *tar.Header, r io.Reader) error {
	name, err := entryName(hdr.Name)
	if err != nil {
		return err
	}
	if name == "" { // the archive's root, "./"
		return nil
	}
	if u.seen[name] {
		return fmt.Errorf("%s: duplicate entry", name)
	}
	u.seen[name] = true
	if name == ReleaseFile || name == ReleaseSigFile {
		return fmt.Errorf("%s: reserved for the installer", name)
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(filepath.Join(u.dest, filepath.FromSlash(name)), 0o755)
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives mark files with TypeRegA
		return u.file(name, hdr.Size, r)
	case tar.TypeSymlink:
		return fmt.Errorf("%s: symbolic link (to %q) not allowed", name, hdr.Linkname)
	case tar.TypeLink:
		return fmt.Errorf("%s: hard link (to %q) not allowed", name, hdr.Linkname)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return fmt.Errorf("%s: device or FIFO not allowed", name)
	}
	return fmt.Errorf("%s: entry type %q not allowed (regular files and directories only)", name, hdr.Typeflag)
}

// entryName checks a tar entry's name and returns it clean and relative,
// without a leading "./" or trailing "/".
func entryName(raw string) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(raw, "./"), "/")
	switch {
	case raw == "./" || raw == ".":
		return "", nil
	case strings.HasPrefix(raw, "/") || filepath.IsAbs(raw):
		return "", fmt.Errorf("%q: absolute path not allowed", raw)
	case name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "/../") || strings.HasSuffix(name, "/.."):
		return "", fmt.Errorf("%q: path leaves the plugin directory (..)", raw)
	case !plugintrust.SafeRel(name):
		return "", fmt.Errorf("%q: not a clean relative path", raw)
	}
	return name, nil
}

// file writes one regular file, counting bytes against the cap as they
// are copied and hashing them.
func (u *unpacker) file(name string, size int64, r io.Reader) error {
	left := u.limits.unpacked - u.total
	if size > left {
		return u.bomb()
	}
	path := filepath.Join(u.dest, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if name == u.entry {
		mode = 0o755
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(u.wrap(name, io.MultiWriter(f, h)), io.LimitReader(r, left+1))
	u.total += n
	if err == nil && n > left {
		err = u.bomb()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	u.written[name] = hex.EncodeToString(h.Sum(nil))
	return nil
}

func (u *unpacker) bomb() error {
	return fmt.Errorf("unpacks to more than %s: refused (decompression bomb?)", byteSize(u.limits.unpacked))
}

// checkFiles compares unpacked files with the manifest's list, reporting
// every difference.
func checkFiles(what string, got, want map[string]string) error {
	var errs []error
	for _, name := range sortedKeys(got) {
		switch w, ok := want[name]; {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: in the archive but not in the signed manifest", name))
		case w != got[name]:
			errs = append(errs, fmt.Errorf("%s: SHA-256 %s, the signed manifest says %s", name, got[name], w))
		}
	}
	for _, name := range sortedKeys(want) {
		if _, ok := got[name]; !ok {
			errs = append(errs, fmt.Errorf("%s: in the signed manifest but missing from the archive", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s does not match its signed manifest:\n%w", what, err)
	}
	return nil
}
