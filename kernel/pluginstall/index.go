package pluginstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// IndexFile is the name of a plugin's version index in a mirror.
const IndexFile = "index.json"

// Index is <mirror>/<name>/index.json: the versions of one plugin. It is
// not signed; it only helps resolve a version.
type Index struct {
	Format   int            `json:"format"`
	Name     string         `json:"name"`
	Versions []IndexVersion `json:"versions"`
}

// IndexVersion is one version as the index describes it.
type IndexVersion struct {
	Version   string   `json:"version"`
	Kind      string   `json:"kind"`
	Protocol  int      `json:"protocol"`
	SDK       string   `json:"sdk"`
	Platforms []string `json:"platforms"`
}

// ParseIndex decodes and checks the index of plugin name; what names the
// file in errors. A bad version entry is not an error here: resolution
// reports it as the reason that version is rejected.
func ParseIndex(what, name string, data []byte) (*Index, error) {
	var ix Index
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("%s: %w", what, decodeErr(data, err))
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := bytes.TrimLeft(data[end:], " \t\r\n")
		line, col := lineCol(data, int64(len(data)-len(rest)))
		return nil, fmt.Errorf("%s: line %d, column %d: unexpected data after the JSON object", what, line, col)
	}
	switch {
	case ix.Format != plugintrust.ReleaseFormat:
		return nil, fmt.Errorf("%s: format: %d is not an index format this Sparrow reads (want %d)", what, ix.Format, plugintrust.ReleaseFormat)
	case ix.Name != name:
		return nil, fmt.Errorf("%s: name: the index is for %q, not %q", what, ix.Name, name)
	case len(ix.Versions) == 0:
		return nil, fmt.Errorf("%s: versions: none listed", what)
	}
	seen := map[string]bool{}
	for _, v := range ix.Versions {
		if seen[v.Version] {
			return nil, fmt.Errorf("%s: versions: %q is listed twice", what, v.Version)
		}
		seen[v.Version] = true
	}
	return &ix, nil
}

// decodeErr names where JSON went wrong, and says so when it stops short.
func decodeErr(data []byte, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated JSON: it stops at byte %d, inside a value", len(data))
	}
	return plugintrust.JSONError(data, err)
}

// lineCol is the 1-based line and column of byte offset off in data.
func lineCol(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
