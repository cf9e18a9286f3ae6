package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/lockfile"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// DiagnosticsError carries config diagnostics (file:line:col) out of an
// operation that returns error.
type DiagnosticsError struct{ Diags hcl.Diagnostics }

func (e *DiagnosticsError) Error() string {
	lines := make([]string, 0, len(e.Diags))
	for _, d := range e.Diags {
		lines = append(lines, d.Error())
	}
	return strings.Join(lines, "\n")
}

// PluginDirs returns where plugins are searched, in order: each config
// plugin block's source path (a plugin directory or its plugin.hcl), the
// data directory, then the directories the CLI adds.
func (k *Kernel) PluginDirs() []string {
	var dirs []string
	for _, name := range sortedKeys(k.Config.Plugins) {
		if src := k.Config.Plugins[name].Source; isPath(src) {
			src = expandHome(src, k.opts.Getenv)
			if filepath.Base(src) == pluginhost.ManifestFile {
				src = filepath.Dir(src)
			}
			if !filepath.IsAbs(src) {
				// Relative to the file that says so.
				base := k.opts.Workspace
				if f := k.Config.Origins["plugin."+name+".source"].File; f != "" {
					base = filepath.Dir(f)
				}
				src = filepath.Join(base, src)
			}
			dirs = append(dirs, src)
		}
	}
	if d := k.Config.Paths.DataDir; d != "" {
		dirs = append(dirs, filepath.Join(d, "plugins"))
	}
	return append(dirs, k.opts.PluginDirs...)
}

func isPath(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~/")
}

func expandHome(p string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(getenv("HOME"), rest)
	}
	return p
}

// pluginSpecs discovers manifests and applies each plugin's config block:
// enabled, version constraint, hash pin and extra environment.
func (k *Kernel) pluginSpecs() ([]pluginhost.Spec, hcl.Diagnostics) {
	manifests, diags := pluginhost.Discover(k.PluginDirs())
	k.Discovered = manifests
	k.pluginOrigins = map[string]string{}
	k.unavailable = map[string]string{}
	k.trust = map[string]PluginTrust{}
	lock, err := lockfile.Read(k.LockFilePath())
	if err != nil {
		// A lock file that cannot be read pins nothing: load no plugin.
		for _, m := range manifests {
			k.unavailable[m.Name] = fmt.Sprintf("the lock file cannot be read: %v", err)
		}
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read the plugin lock file", Detail: err.Error()})
	}
	ring, _ := plugintrust.ParseKeyRing(k.Config.Policy.TrustedKeys) // validated with the config
	var specs []pluginhost.Spec
	for _, m := range manifests {
		k.pluginOrigins[m.Name] = filepath.Dir(m.File)
		block, ok := k.Config.Plugins[m.Name]
		if !ok {
			spec := pluginhost.Spec{Manifest: m}
			if why := k.admit(m, &spec, lock, ring); why != "" {
				k.unavailable[m.Name] = why
				continue
			}
			specs = append(specs, spec)
			continue
		}
		if !block.Enabled {
			k.unavailable[m.Name] = "disabled by " + k.Config.Origins["plugin."+m.Name+".enabled"].String()
			continue
		}
		if block.Version != "" {
			c, err := semver.NewConstraint(block.Version)
			if err == nil && !c.Check(m.Version) {
				k.unavailable[m.Name] = fmt.Sprintf("version %s does not satisfy %q (%s)", m.Version, block.Version,
					k.Config.Origins["plugin."+m.Name+".version"])
				continue
			}
		}
		mc := *m
		mc.Capabilities.Env = union(m.Capabilities.Env, block.Env)
		spec := pluginhost.Spec{Manifest: &mc, SHA256: strings.ToLower(block.SHA256)}
		if spec.SHA256 != "" {
			spec.PinnedBy = k.Config.Origins["plugin."+m.Name+".sha256"].String()
		}
		if why := k.admit(&mc, &spec, lock, ring); why != "" {
			k.unavailable[m.Name] = why
			continue
		}
		specs = append(specs, spec)
	}
	for i := range specs {
		specs[i].Files = k.configFiles(specs[i].Manifest)
	}
	return specs, diags
}

// Unavailable says why a discovered plugin will not be started, or "".
func (k *Kernel) Unavailable(name string) string { return k.unavailable[name] }

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// component resolves a configured component to the plugin serving it,
// starts that plugin and configures the component from its HCL block,
// once per Kernel.
func (k *Kernel) component(ctx context.Context, kind plugin.Kind, name string) (*pluginhost.Plugin, string, error) {
	key := string(kind) + "." + name
	k.mu.Lock()
	done, ok := k.configured[key]
	k.mu.Unlock()
	if ok {
		return done.p, done.component, done.err
	}
	p, comp, err := k.resolve(ctx, kind, name)
	k.mu.Lock()
	if k.configured == nil {
		k.configured = map[string]configured{}
	}
	k.configured[key] = configured{p: p, component: comp, err: err}
	k.mu.Unlock()
	return p, comp, err
}

type configured struct {
	p         *pluginhost.Plugin
	component string
	err       error
}

func (k *Kernel) resolve(ctx context.Context, kind plugin.Kind, name string) (*pluginhost.Plugin, string, error) {
	block := componentBlocks(k.Config, kind)[name]
	if block != nil && !block.Enabled {
		return nil, "", fmt.Errorf("%s %s is disabled (%s)", kind, name, k.Config.Origins[string(kind)+"."+name+".enabled"])
	}
	pluginName, component := "", name
	if block != nil && block.Plugin != "" {
		pluginName = block.Plugin
	} else if m := k.discovered(kind, name); m != nil {
		pluginName = m.Name
	} else {
		return nil, "", k.notFound(kind, name)
	}
	if why := k.unavailable[pluginName]; why != "" {
		return nil, "", fmt.Errorf("%s %s needs plugin %s, which is unavailable: %s", kind, name, pluginName, why)
	}
	p, err := k.Plugins.Start(ctx, pluginName)
	if err != nil {
		return nil, "", err
	}
	if !slices.ContainsFunc(p.Info.Components, func(c plugin.ComponentInfo) bool { return c.Name == component }) {
		if len(p.Info.Components) != 1 {
			return nil, "", fmt.Errorf("plugin %s serves no %s %q", pluginName, kind, name)
		}
		component = p.Info.Components[0].Name
	}
	if err := k.configure(ctx, p, kind, name, component, block); err != nil {
		return nil, "", err
	}
	return p, component, nil
}

// discovered returns the discovered plugin serving a component, started or
// not.
func (k *Kernel) discovered(kind plugin.Kind, component string) *pluginhost.Manifest {
	for _, m := range k.Discovered {
		if m.Kind == kind && slices.Contains(m.Components, component) {
			return m
		}
	}
	return nil
}

func (k *Kernel) notFound(kind plugin.Kind, name string) error {
	var have []string
	for _, m := range k.Discovered {
		if m.Kind == kind {
			have = append(have, m.Components...)
		}
	}
	if len(have) == 0 {
		return fmt.Errorf("no plugin serves %s %q, and no %s plugins are installed (searched %s)", kind, name, kind, strings.Join(k.PluginDirs(), ", "))
	}
	slices.Sort(have)
	return fmt.Errorf("no plugin serves %s %q; available: %s", kind, name, strings.Join(have, ", "))
}

func componentBlocks(cfg *config.Config, kind plugin.Kind) map[string]*config.Component {
	switch kind {
	case plugin.KindProvider:
		return cfg.Providers
	case plugin.KindSandbox:
		return cfg.Sandboxes
	case plugin.KindTool:
		return cfg.Tools
	default:
		return cfg.Surfaces
	}
}

// configure decodes a component's HCL block against the schema its plugin
// declares, so mistakes are reported at file:line like any config error,
// and hands the result to the plugin.
func (k *Kernel) configure(ctx context.Context, p *pluginhost.Plugin, kind plugin.Kind, name, component string, block *config.Component) error {
	schema, err := p.Schema(ctx, component)
	if err != nil {
		return err
	}
	specs, err := attrSpecs(schema)
	if err != nil {
		return fmt.Errorf("plugin %s: %s %s: %w", p.Manifest.Name, kind, component, err)
	}
	// Tool plugins are configured in parallel (ToolEntries).
	k.mu.Lock()
	k.Config.MarkSensitive(string(kind), name, specs)
	k.mu.Unlock()
	var bodies []hcl.Body
	if block != nil {
		bodies = block.Bodies
	}
	// --base-url points any provider that takes one at another server; it
	// is a flag, so it beats the block, and it satisfies "required".
	overrideURL := kind == plugin.KindProvider && k.Config.BaseURL != ""
	if overrideURL {
		for i := range specs {
			if specs[i].Name == "base_url" {
				specs[i].Required, specs[i].Default = false, k.Config.BaseURL
			}
		}
	}
	settings := k.opts.Settings[string(kind)+"."+name]
	for i := range specs {
		if v, ok := settings[specs[i].Name]; ok {
			specs[i].Required, specs[i].Default = false, v
		}
	}
	values, diags := config.DecodeComponent(bodies, specs, k.opts.Getenv)
	if diags.HasErrors() {
		return &DiagnosticsError{Diags: diags}
	}
	k.rememberSecrets(specs, values)
	if overrideURL && slices.ContainsFunc(specs, func(s config.AttrSpec) bool { return s.Name == "base_url" }) {
		values["base_url"] = k.Config.BaseURL
	}
	for _, s := range specs {
		if v, ok := settings[s.Name]; ok {
			values[s.Name] = v
		}
	}
	raw, err := json.Marshal(jsonValues(values))
	if err != nil {
		return fmt.Errorf("%s %s: encode config: %w", kind, name, err)
	}
	return p.Configure(ctx, component, plugin.Config{Values: raw, Workspace: k.opts.Workspace, StateDir: k.Config.Paths.StateDir})
}

// attrSpecs converts a plugin's declared schema into config's terms.
// Durations travel as Go duration strings; defaults arrive as JSON values.
func attrSpecs(s plugin.Schema) ([]config.AttrSpec, error) {
	out := make([]config.AttrSpec, 0, len(s.Attributes))
	for _, a := range s.Attributes {
		spec := config.AttrSpec{Name: a.Name, Type: a.Type.String(), Required: a.Required, Sensitive: a.Sensitive}
		if a.Default != nil {
			d, err := defaultValue(a)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: default: %w", a.Name, err)
			}
			spec.Default = d
		}
		out = append(out, spec)
	}
	return out, nil
}

func defaultValue(a plugin.Attribute) (any, error) {
	raw, err := json.Marshal(a.Default)
	if err != nil {
		return nil, err
	}
	switch a.Type {
	case plugin.ListOfString:
		var v []string
		return v, json.Unmarshal(raw, &v)
	case plugin.MapOfString:
		var v map[string]string
		return v, json.Unmarshal(raw, &v)
	case plugin.Duration:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return time.ParseDuration(s)
	case plugin.Number:
		var v float64
		return v, json.Unmarshal(raw, &v)
	case plugin.Bool:
		var v bool
		return v, json.Unmarshal(raw, &v)
	default:
		var v string
		return v, json.Unmarshal(raw, &v)
	}
}

func jsonValues(values map[string]any) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		if d, ok := v.(time.Duration); ok {
			v = d.String()
		}
		out[k] = v
	}
	return out
}

// Sandbox returns the named sandbox backend, started and configured.
func (k *Kernel) Sandbox(ctx context.Context, name string) (sandbox.Sandbox, error) {
	p, comp, err := k.component(ctx, plugin.KindSandbox, name)
	if err != nil {
		return nil, err
	}
	return p.Sandbox(comp)
}

// Provider returns the named provider, started and configured.
func (k *Kernel) Provider(ctx context.Context, name string) (provider.Provider, error) {
	p, comp, err := k.component(ctx, plugin.KindProvider, name)
	if err != nil {
		return nil, err
	}
	return p.Provider(comp)
}

// rememberSecrets keeps the values of sensitive attributes, so the bus
// can redact them wherever they show up.
func (k *Kernel) rememberSecrets(specs []config.AttrSpec, values map[string]any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range specs {
		if v, ok := values[s.Name].(string); ok && s.Sensitive && v != "" {
			k.secretValues = append(k.secretValues, v)
		}
	}
}

// secrets returns the sensitive values seen so far.
func (k *Kernel) secrets() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.secretValues)
}
