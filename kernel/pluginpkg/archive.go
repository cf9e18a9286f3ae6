package pluginpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// archiveTime is every entry's modification time: the archive's bytes
// depend on the files' contents and names only.
var archiveTime = time.Unix(0, 0).UTC()

// buildArchive writes files into a deterministic tar.gz: entries sorted by
// path, each directory before its contents, owner 0:0 without names,
// modes 0755 for entry and directories and 0644 for the rest. It returns
// the archive and each file's SHA-256.
func buildArchive(files []srcFile, entry string) ([]byte, map[string]string, error) {
	type item struct {
		name string // directories end in "/"
		file *srcFile
	}
	var items []item
	dirs := map[string]bool{}
	for i := range files {
		f := &files[i]
		items = append(items, item{name: f.rel, file: f})
		for d := path.Dir(f.rel); d != "."; d = path.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				items = append(items, item{name: d + "/"})
			}
		}
	}
	// "a/" sorts after "a-b" and before "a/x": a directory still precedes
	// everything inside it.
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })

	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	tw := tar.NewWriter(zw)
	hashes := map[string]string{}
	for _, it := range items {
		hdr := &tar.Header{Name: it.name, ModTime: archiveTime, Format: tar.FormatUSTAR}
		var data []byte
		if it.file == nil {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		} else {
			var err error
			if data, err = os.ReadFile(it.file.path); err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", it.file.path, err)
			}
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
			if it.name == entry {
				hdr.Mode = 0o755
			}
			hashes[it.name] = plugintrust.HashBytes(data)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, nil, fmt.Errorf("archive %s: %w", strings.TrimSuffix(it.name, "/"), err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, nil, fmt.Errorf("archive %s: %w", it.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archive: %w", err)
	}
	return buf.Bytes(), hashes, nil
}
