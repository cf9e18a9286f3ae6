package pluginpkg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// IndexFile is the name of the mirror's and each plugin's index.
const IndexFile = "index.json"

// mirrorIndex is <mirror>/index.json.
type mirrorIndex struct {
	Format  int      `json:"format"`
	Plugins []string `json:"plugins"`
}

// pluginIndex is <mirror>/<name>/index.json.
type pluginIndex struct {
	Format   int            `json:"format"`
	Name     string         `json:"name"`
	Versions []indexVersion `json:"versions"`
}

type indexVersion struct {
	Version   string   `json:"version"`
	Kind      string   `json:"kind"`
	Protocol  int      `json:"protocol"`
	SDK       string   `json:"sdk"`
	Platforms []string `json:"platforms"`
}

// indexUpdate is the two indexes as they will be written.
type indexUpdate struct {
	pluginPath, mirrorPath string
	plugin                 pluginIndex
	mirror                 mirrorIndex
}

// planIndexes reads both indexes and records r in them: in the plugin's
// index (replacing an entry of the same version) and the plugin's name in
// the mirror's. Nothing is written; an index it cannot read is an error
// before anything is published.
func planIndexes(mirrorDir string, r *plugintrust.Release) (*indexUpdate, error) {
	ppath := filepath.Join(mirrorDir, r.Name, IndexFile)
	pi := pluginIndex{Format: plugintrust.ReleaseFormat, Name: r.Name}
	if err := readIndex(ppath, &pi); err != nil {
		return nil, err
	}
	if pi.Name != r.Name {
		return nil, fmt.Errorf("%s: indexes plugin %q, not %q; it is not rewritten", ppath, pi.Name, r.Name)
	}
	entry := indexVersion{Version: r.Version, Kind: r.Kind, Protocol: r.Protocol, SDK: r.SDK, Platforms: r.PlatformNames()}
	pi.Versions = slices.DeleteFunc(pi.Versions, func(v indexVersion) bool { return v.Version == r.Version })
	pi.Versions = append(pi.Versions, entry)
	if err := sortVersions(ppath, pi.Versions); err != nil {
		return nil, err
	}

	mpath := filepath.Join(mirrorDir, IndexFile)
	mi := mirrorIndex{Format: plugintrust.ReleaseFormat}
	if err := readIndex(mpath, &mi); err != nil {
		return nil, err
	}
	mi.Plugins = append(mi.Plugins, r.Name)
	sort.Strings(mi.Plugins)
	mi.Plugins = slices.Compact(mi.Plugins)
	return &indexUpdate{pluginPath: ppath, mirrorPath: mpath, plugin: pi, mirror: mi}, nil
}

// write writes the plugin's index, then the mirror's.
func (u *indexUpdate) write() error {
	if err := writeJSON(u.pluginPath, u.plugin); err != nil {
		return err
	}
	return writeJSON(u.mirrorPath, u.mirror)
}

// readIndex decodes an existing index into v, leaving v alone when there
// is none. An index it cannot fully read is an error, never overwritten.
func readIndex(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w; fix or remove it, it is not rewritten", path, plugintrust.JSONError(data, err))
	}
	var format int
	switch x := v.(type) {
	case *mirrorIndex:
		format = x.Format
	case *pluginIndex:
		format = x.Format
	}
	if format != plugintrust.ReleaseFormat {
		return fmt.Errorf("%s: format %d, want %d; it is not rewritten", path, format, plugintrust.ReleaseFormat)
	}
	return nil
}

// sortVersions orders versions by semantic version, lowest first.
func sortVersions(path string, vs []indexVersion) error {
	parsed := make(map[string]*semver.Version, len(vs))
	for _, v := range vs {
		sv, err := semver.StrictNewVersion(v.Version)
		if err != nil {
			return fmt.Errorf("%s: version %q is not a semantic version; fix or remove it, it is not rewritten", path, v.Version)
		}
		parsed[v.Version] = sv
	}
	sort.Slice(vs, func(i, j int) bool { return parsed[vs[i].Version].LessThan(parsed[vs[j].Version]) })
	return nil
}

// writeJSON writes v indented, with a final newline, temp + rename.
func writeJSON(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // ">= 0.1.0" stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return plugintrust.WriteFileAtomic(path, b.Bytes(), 0o644)
}
