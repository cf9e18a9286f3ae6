package pluginhost

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"
)

// Discover reads the manifests under each directory, in order. Each
// directory is either a plugin directory itself or holds plugin
// directories. A plugin
// directory holds plugin.hcl directly (dir/NAME/plugin.hcl, the layout of a
// build) or one directory per installed version (dir/NAME/VERSION/
// plugin.hcl), in which case the highest version wins. A name found in an
// earlier directory shadows later ones. Missing directories are skipped;
// broken manifests are reported and skipped.
func Discover(dirs []string) ([]*Manifest, hcl.Diagnostics) {
	var (
		out   []*Manifest
		diags hcl.Diagnostics
		seen  = map[string]bool{}
	)
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
			// dir is itself a plugin directory.
			m, d := readPluginDir(dir)
			diags = append(diags, d...)
			if m != nil && !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m)
			}
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Cannot read plugin directory", Detail: err.Error()})
			}
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			m, d := readPluginDir(filepath.Join(dir, e.Name()))
			diags = append(diags, d...)
			if m == nil || seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, diags
}

func readPluginDir(dir string) (*Manifest, hcl.Diagnostics) {
	direct := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(direct); err == nil {
		return ReadManifest(direct)
	}
	versions, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var best *Manifest
	var diags hcl.Diagnostics
	for _, v := range versions {
		if _, err := semver.StrictNewVersion(v.Name()); err != nil || !v.IsDir() {
			continue
		}
		path := filepath.Join(dir, v.Name(), ManifestFile)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		m, d := ReadManifest(path)
		diags = append(diags, d...)
		if m != nil && (best == nil || m.Version.GreaterThan(best.Version)) {
			best = m
		}
	}
	return best, diags
}
