package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// ManifestError says plugin.hcl is invalid; Diags name file:line:column.
type ManifestError struct{ Diags hcl.Diagnostics }

func (e *ManifestError) Error() string { return "plugin manifest: " + e.Diags.Error() }

// SourceError lists every reason a plugin directory cannot be packaged.
type SourceError struct {
	Dir      string
	Problems []string
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("%s cannot be packaged:\n  - %s", e.Dir, strings.Join(e.Problems, "\n  - "))
}

// source is a plugin directory laid out for packaging: plugin.hcl and
// shared files at the top, one <os>_<arch>/ directory per build (or, for
// WASM, the module at the top).
type source struct {
	dir      string
	manifest *pluginhost.Manifest
	// entry is the manifest's entry, slash-separated and relative.
	entry string
	// shared go into every archive; platforms maps "os/arch" (or "wasm")
	// to the files of that build. Both sorted by rel.
	shared    []srcFile
	platforms map[string][]srcFile
}

type srcFile struct {
	rel  string // slash-separated path inside the archive
	path string // on disk
}

// knownOS are the GOOS values a directory name may start with to be taken
// for a platform build ("linux_amd64"); any other directory is shared.
var knownOS = map[string]bool{
	"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true, "illumos": true,
	"ios": true, "js": true, "linux": true, "netbsd": true, "openbsd": true, "plan9": true,
	"solaris": true, "wasip1": true, "windows": true,
}

var platformDir = regexp.MustCompile(`^([a-z0-9]+)_([a-z0-9]+)$`)

// platformOf returns "os/arch" for a platform build directory's name.
func platformOf(name string) (string, bool) {
	m := platformDir.FindStringSubmatch(name)
	if m == nil || !knownOS[m[1]] {
		return "", false
	}
	return m[1] + "/" + m[2], true
}

// readSource reads and checks dir, reporting every problem at once.
func readSource(dir string) (*source, error) {
	mpath := filepath.Join(dir, pluginhost.ManifestFile)
	if _, err := os.Stat(mpath); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &SourceError{Dir: dir, Problems: []string{
				"no plugin.hcl: a plugin directory holds plugin.hcl, shared files and one <os>_<arch>/ directory per build"}}
		}
		return nil, fmt.Errorf("read %s: %w", mpath, err)
	}
	m, diags := pluginhost.ReadManifest(mpath)
	if diags.HasErrors() {
		return nil, &ManifestError{Diags: diags}
	}
	rel, err := filepath.Rel(dir, m.Entry)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", m.Entry, err)
	}
	s := &source{dir: dir, manifest: m, entry: filepath.ToSlash(rel), platforms: map[string][]srcFile{}}
	problems, err := s.scan()
	if err != nil {
		return nil, err
	}
	if problems = append(problems, s.check()...); len(problems) > 0 {
		return nil, &SourceError{Dir: dir, Problems: problems}
	}
	for plat, files := range s.platforms {
		if !s.wasm() {
			files = append(files, s.shared...)
		}
		sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
		s.platforms[plat] = files
	}
	return s, nil
}

func (s *source) wasm() bool { return s.manifest.Runtime == pluginhost.RuntimeWASM }

// scan sorts the top level of the directory into shared files and
// platform builds. A WASM plugin's files all belong to platform "wasm".
func (s *source) scan() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.dir, err)
	}
	var problems []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(s.dir, name)
		plat, isPlat := platformOf(name)
		switch {
		case e.IsDir() && isPlat && s.wasm():
			problems = append(problems, fmt.Sprintf("%s/ looks like a %s build, but runtime is wasm: a WASM plugin has one platform, its module at the top level", name, plat))
		case e.IsDir() && isPlat:
			files, probs := walkFiles(p, "")
			problems = append(problems, probs...)
			s.platforms[plat] = files
		case e.IsDir():
			files, probs := walkFiles(p, name)
			problems = append(problems, probs...)
			s.shared = append(s.shared, files...)
		case e.Type().IsRegular():
			s.shared = append(s.shared, srcFile{rel: name, path: p})
		default:
			problems = append(problems, fmt.Sprintf("%s is not a regular file (links and devices are not packaged; copy the file in)", name))
		}
	}
	if s.wasm() {
		s.platforms[plugintrust.PlatformWASM], s.shared = s.shared, nil
	}
	return problems, nil
}

// check reports what keeps the scanned builds from being packaged.
func (s *source) check() []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if s.wasm() {
		if !slices.ContainsFunc(s.platforms[plugintrust.PlatformWASM], func(f srcFile) bool { return f.rel == s.entry }) {
			bad("entry %s is missing: a WASM plugin's module sits beside plugin.hcl", s.entry)
		}
		return problems
	}
	shared := map[string]bool{}
	for _, f := range s.shared {
		shared[f.rel] = true
	}
	if shared[s.entry] {
		bad("%s (the entry) is at the top level: for runtime grpc each build goes in its own <os>_<arch>/ directory", s.entry)
	}
	if len(s.platforms) == 0 {
		bad("no platform builds: put each build's %s in an <os>_<arch>/ directory, such as linux_amd64/%s", s.entry, s.entry)
	}
	for _, plat := range sortedKeys(s.platforms) {
		dirName := strings.ReplaceAll(plat, "/", "_")
		hasEntry := false
		for _, f := range s.platforms[plat] {
			hasEntry = hasEntry || f.rel == s.entry
			if shared[f.rel] && f.rel != s.entry {
				bad("%s/%s is also a shared file at the top level; keep one", dirName, f.rel)
			}
		}
		if !hasEntry {
			bad("%s/ has no %s, the entry plugin.hcl names", dirName, s.entry)
		} else if why := binaryMismatch(filepath.Join(s.dir, dirName, filepath.FromSlash(s.entry)), plat); why != "" {
			bad("%s/%s %s", dirName, s.entry, why)
		}
	}
	return problems
}

// walkFiles lists the regular files under root, their rel prefixed with
// prefix; dot files are skipped and anything else is a problem.
func walkFiles(root, prefix string) ([]srcFile, []string) {
	var files []srcFile
	var problems []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		inner, _ := filepath.Rel(root, p)
		inner = filepath.ToSlash(inner)
		if strings.HasPrefix(d.Name(), ".") && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			files = append(files, srcFile{rel: path.Join(prefix, inner), path: p})
		default:
			problems = append(problems, fmt.Sprintf("%s is not a regular file (links and devices are not packaged; copy the file in)", path.Join(filepath.Base(root), inner)))
		}
		return nil
	})
	if err != nil {
		problems = append(problems, err.Error())
	}
	return files, problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
