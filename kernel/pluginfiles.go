package kernel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
)

// configFiles lists the files a confined plugin may read because the user
// named them for one of its components: an absolute path to an existing
// regular file as a string attribute of the component's block in config,
// or as a command-line setting (a replay provider's recording). Config
// loading already drops the component blocks of a project the user has
// not trusted, so a repository cannot grant itself a file.
func (k *Kernel) configFiles(m *pluginhost.Manifest) []string {
	blocks := componentBlocks(k.Config, m.Kind)
	serves := func(component string) bool {
		if b := blocks[component]; b != nil && b.Plugin != "" {
			return b.Plugin == m.Name
		}
		return slices.Contains(m.Components, component)
	}
	var out []string
	add := func(v any) {
		s, ok := v.(string)
		if !ok || !filepath.IsAbs(s) {
			return
		}
		s = filepath.Clean(s)
		if fi, err := os.Stat(s); err == nil && fi.Mode().IsRegular() && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, name := range sortedKeys(blocks) {
		b := blocks[name]
		if !serves(name) {
			continue
		}
		for _, body := range b.Bodies {
			if body == nil {
				continue
			}
			attrs, _ := body.JustAttributes()
			for _, a := range attrs {
				v, diags := a.Expr.Value(nil)
				if !diags.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
					add(v.AsString())
				}
			}
		}
	}
	for _, key := range sortedKeys(k.opts.Settings) {
		kind, name, _ := strings.Cut(key, ".")
		if kind != string(m.Kind) || !serves(name) {
			continue
		}
		for _, attr := range sortedKeys(k.opts.Settings[key]) {
			add(k.opts.Settings[key][attr])
		}
	}
	return out
}
