package kernel

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Version is Sparrow's version, set at build time with
// -ldflags "-X github.com/sparrow-cli/sparrow/kernel.Version=...".
var Version = "0.1.0-dev"

// Options open a Kernel.
type Options struct {
	// Workspace is the directory Sparrow works in.
	Workspace string
	// Getenv reads the environment (os.Getenv from main).
	Getenv func(string) string
	// LookupEnv reads the environment for plugins' declared variables
	// (os.LookupEnv from main).
	LookupEnv func(string) (string, bool)
	// Overrides are command-line flags.
	Overrides config.Overrides
	// UserFile replaces user config discovery when set.
	UserFile string
	// SystemPolicyFile is the binding system-wide policy; empty: none.
	SystemPolicyFile string
	// Stderr receives plugin logs too when the config says verbose.
	Stderr io.Writer
	// PluginDirs are searched for plugins after the data directory; the
	// CLI passes the directories beside its executable.
	PluginDirs []string
	// Exec serves plugins' Host.Exec calls; nil offers none.
	Exec sandbox.HostHandler
	// ConfineInit is a binary whose main calls confine.Init first (the
	// sparrow executable); plugins run confined to their manifests'
	// capabilities only when it is set. See pluginhost.Options.
	ConfineInit string
	// Settings set component attributes the way flags do, beating config
	// and satisfying required attributes: Settings["provider.replay"]
	// ["file"] configures the replay provider's file.
	Settings map[string]map[string]any
}

// Kernel is one invocation's trusted core.
type Kernel struct {
	Config *config.Config
	// Plugins is the plugin host.
	Plugins *pluginhost.Host
	// Log is Sparrow's logger, writing to LogFile.
	Log hclog.Logger
	// LogFile is the log's path, empty when logging to a file failed.
	LogFile string
	// Diagnostics are the non-fatal problems found while opening:
	// config warnings, skipped plugin manifests.
	Diagnostics hcl.Diagnostics

	opts      Options
	closeLog  func() error
	closeOnce sync.Once
	// pluginOrigins says which directory each plugin came from.
	pluginOrigins map[string]string
	// Discovered lists every plugin manifest found, started or not.
	Discovered []*pluginhost.Manifest
	// unavailable says why a discovered plugin is not started.
	unavailable map[string]string
	// trust is each discovered plugin's provenance.
	trust map[string]PluginTrust

	mu           sync.Mutex
	configured   map[string]configured
	secretValues []string
}

// Open loads the configuration, opens the log and discovers plugins. It
// fails only on errors a command cannot work around (invalid config);
// broken plugin manifests are reported in Diagnostics and skipped.
func Open(opts Options) (*Kernel, hcl.Diagnostics) {
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	cfg, diags := config.Load(config.LoadOptions{
		Workspace: opts.Workspace, Getenv: opts.Getenv, Overrides: opts.Overrides, UserFile: opts.UserFile,
		SystemPolicyFile: opts.SystemPolicyFile,
	})
	if diags.HasErrors() {
		return nil, diags
	}
	k := &Kernel{Config: cfg, opts: opts, Diagnostics: diags}
	k.openLog()
	specs, pdiags := k.pluginSpecs()
	k.Diagnostics = append(k.Diagnostics, pdiags...)
	if pdiags.HasErrors() {
		// A bad plugin block in config is a config error; a broken
		// manifest on disk only removes that plugin.
		for _, d := range pdiags {
			if d.Severity == hcl.DiagError && d.Subject != nil && isConfigFile(cfg, d.Subject.Filename) {
				k.closeLog()
				return nil, k.Diagnostics
			}
		}
	}
	host, err := pluginhost.New(pluginhost.Options{
		SparrowVersion: Version,
		Logger:         k.Log.Named("plugin"),
		LookupEnv:      opts.LookupEnv,
		Exec:           opts.Exec,
		ConfineInit:    opts.ConfineInit,
		Workspace:      opts.Workspace,
		CacheDir:       cfg.Paths.CacheDir,
		HidePath:       gate.DeniedMatcher(cfg.Permissions.DeniedPaths),
	}, specs)
	if err != nil {
		k.closeLog()
		return nil, append(k.Diagnostics, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Conflicting plugins", Detail: err.Error()})
	}
	k.Plugins = host
	k.Log.Debug("kernel open", "version", Version, "sdk", sdk.Version, "workspace", opts.Workspace, "plugins", len(specs))
	return k, k.Diagnostics
}

// Close stops every plugin and closes the log. It is safe to call more than
// once and from a signal handler's goroutine.
func (k *Kernel) Close() {
	k.closeOnce.Do(func() {
		if k.Plugins != nil {
			k.Plugins.Close()
		}
		k.Log.Debug("kernel closed")
		_ = k.closeLog()
	})
}

// openLog appends to $XDG_STATE_HOME/sparrow/sparrow.log. Plugin logs go
// there and never to the terminal unless the config says verbose.
func (k *Kernel) openLog() {
	level := hclog.LevelFromString(k.Config.LogLevel)
	if k.Config.Verbose && level > hclog.Debug {
		level = hclog.Debug
	}
	var out io.Writer = io.Discard
	k.closeLog = func() error { return nil }
	if dir := k.Config.Paths.StateDir; dir != "" {
		if err := os.MkdirAll(dir, 0o700); err == nil {
			path := filepath.Join(dir, "sparrow.log")
			if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				out, k.LogFile, k.closeLog = f, path, f.Close
			}
		}
	}
	if k.Config.Verbose {
		out = io.MultiWriter(out, k.opts.Stderr)
	}
	k.Log = hclog.New(&hclog.LoggerOptions{Name: "sparrow", Level: level, Output: out, TimeFormat: "2006-01-02T15:04:05.000Z07:00"})
}

func isConfigFile(cfg *config.Config, name string) bool {
	return name != "" && (name == cfg.Paths.UserFile || name == cfg.Paths.ProjectFile)
}

// Start starts the named plugin.
func (k *Kernel) Start(ctx context.Context, name string) (*pluginhost.Plugin, error) {
	return k.Plugins.Start(ctx, name)
}

// PluginOrigin says where a plugin was found: a config file and line, or a
// directory.
func (k *Kernel) PluginOrigin(name string) string { return k.pluginOrigins[name] }
