package plugintrust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ReleaseFormat is the version of the release manifest and index formats.
const ReleaseFormat = 1

// PlatformWASM is the one platform of a WASM plugin.
const PlatformWASM = "wasm"

// Release is the signed release manifest: what a plugin version is, what
// it may do, and the hash of every file of every platform.
type Release struct {
	Format       int                  `json:"format"`
	Name         string               `json:"name"`
	Version      string               `json:"version"`
	Kind         string               `json:"kind"`
	Protocol     int                  `json:"protocol"`
	SDK          string               `json:"sdk"`
	Runtime      string               `json:"runtime"`
	Entry        string               `json:"entry"`
	Capabilities Capabilities         `json:"capabilities"`
	Platforms    map[string]*Platform `json:"platforms"`
}

// Capabilities are what the plugin declares it needs from the host.
type Capabilities struct {
	Network bool     `json:"network"`
	Paths   []string `json:"paths"`
	Env     []string `json:"env"`
	// Workspace is a surface's claim to the workspace.
	Workspace bool `json:"workspace,omitempty"`
}

// Platform is one build of a release.
type Platform struct {
	Archive       string `json:"archive"`
	ArchiveSHA256 string `json:"archive_sha256"`
	// Files maps every regular file in the archive (slash-separated
	// relative path) to its SHA-256.
	Files map[string]string `json:"files"`
}

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	hashRE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	platformRE = regexp.MustCompile(`^([a-z0-9]+/[a-z0-9]+|wasm)$`)
)

// ValidName reports whether s may name a plugin: lower-case letters,
// digits and dashes, starting with a letter or digit.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ValidHash reports whether s is a lower-case hex SHA-256.
func ValidHash(s string) bool { return hashRE.MatchString(s) }

// ParseRelease decodes and validates a release manifest; what names it in
// errors.
func ParseRelease(what string, data []byte) (*Release, error) {
	var r Release
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", what, jsonErr(data, err))
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &r, nil
}

// Validate checks every field; the error names the first bad one.
func (r *Release) Validate() error {
	switch {
	case r.Format != ReleaseFormat:
		return fmt.Errorf("format: %d is not a release format this Sparrow reads (want %d)", r.Format, ReleaseFormat)
	case !ValidName(r.Name):
		return fmt.Errorf("name: %q is not a plugin name (lower-case letters, digits, dashes)", r.Name)
	case r.Protocol < 1:
		return fmt.Errorf("protocol: want a positive protocol version, got %d", r.Protocol)
	case r.Runtime != "grpc" && r.Runtime != "wasm":
		return fmt.Errorf("runtime: %q, want grpc or wasm", r.Runtime)
	case r.Entry == "" || !safeRel(r.Entry):
		return fmt.Errorf("entry: %q is not a relative path inside the plugin", r.Entry)
	case len(r.Platforms) == 0:
		return fmt.Errorf("platforms: none listed")
	}
	if _, err := semver.StrictNewVersion(r.Version); err != nil {
		return fmt.Errorf("version: %q is not a semantic version: %v", r.Version, err)
	}
	if _, err := semver.NewConstraint(r.SDK); err != nil {
		return fmt.Errorf("sdk: %q is not a version range: %v", r.SDK, err)
	}
	switch r.Kind {
	case "provider", "tool", "sandbox", "surface":
	default:
		return fmt.Errorf("kind: %q, want provider, tool, sandbox or surface", r.Kind)
	}
	for _, name := range r.PlatformNames() {
		p := r.Platforms[name]
		switch {
		case !platformRE.MatchString(name):
			return fmt.Errorf("platforms: %q is not os/arch", name)
		case (name == PlatformWASM) != (r.Runtime == "wasm"):
			return fmt.Errorf("platforms: %q does not fit runtime %q", name, r.Runtime)
		case p == nil || p.Archive != ArchiveName(r.Name, r.Version, name):
			return fmt.Errorf("platforms.%s.archive: want %q", name, ArchiveName(r.Name, r.Version, name))
		case !ValidHash(p.ArchiveSHA256):
			return fmt.Errorf("platforms.%s.archive_sha256: not a SHA-256", name)
		case p.Files[r.Entry] == "":
			return fmt.Errorf("platforms.%s.files: the entry %q is missing", name, r.Entry)
		}
		for f, h := range p.Files {
			if !safeRel(f) {
				return fmt.Errorf("platforms.%s.files: %q is not a relative path inside the plugin", name, f)
			}
			if !ValidHash(h) {
				return fmt.Errorf("platforms.%s.files.%s: not a SHA-256", name, f)
			}
		}
	}
	return nil
}

// PlatformNames lists the platforms, sorted.
func (r *Release) PlatformNames() []string {
	names := make([]string, 0, len(r.Platforms))
	for n := range r.Platforms {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Marshal encodes the manifest as published: indented, fields in a fixed
// order, map keys sorted, "<" and ">" left readable.
func (r *Release) Marshal() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r) // a Release always encodes
	return b.Bytes()
}

// File names inside a version directory of a mirror.
func ManifestName(name, version string) string { return name + "_" + version + "_manifest.json" }

// SumsName is the SHA256SUMS file of a version.
func SumsName(name, version string) string { return name + "_" + version + "_SHA256SUMS" }

// ArchiveName is the archive of one platform ("linux/amd64" or "wasm").
func ArchiveName(name, version, platform string) string {
	return name + "_" + version + "_" + strings.ReplaceAll(platform, "/", "_") + ".tar.gz"
}

// safeRel reports whether p is a clean, relative, slash-separated path
// that stays inside its root.
func safeRel(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "." && p != ".." &&
		!strings.HasPrefix(p, "../") && !strings.Contains(p, "\\") && !strings.ContainsRune(p, 0)
}

// SafeRel reports whether p is a clean relative path inside its root.
func SafeRel(p string) bool { return safeRel(p) }

// jsonErr adds the line and column to a JSON syntax or type error.
func jsonErr(data []byte, err error) error {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 {
		if err.Error() == "EOF" {
			return fmt.Errorf("empty or truncated JSON")
		}
		return err
	}
	line, col := 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// JSONError adds the line and column to a JSON decoding error of data.
func JSONError(data []byte, err error) error { return jsonErr(data, err) }
