package singularity

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "singularity"` block.
type settings struct {
	// Image is a local image (a .sif file or a sandbox directory, by
	// absolute path) or a URI Apptainer can pull (docker://debian:12-slim,
	// library://..., oras://...). A URI is pulled once per session.
	Image string `json:"image"`
	// Binary is the CLI to run: a name on PATH or an absolute path. Empty
	// means apptainer when it is on PATH, else singularity.
	Binary string `json:"binary"`
	// Workdir is where the workspace is bound inside the container.
	Workdir        string `json:"workdir"`
	DefaultTimeout string `json:"default_timeout"`
	MaxOutputBytes int64  `json:"max_output_bytes"`

	timeout time.Duration
	// stateDir is Sparrow's state directory, from plugin.Config.
	stateDir string
}

func defaultSettings() settings {
	return settings{Workdir: "/workspace", DefaultTimeout: "10m", MaxOutputBytes: 1 << 20, timeout: 10 * time.Minute}
}

// ConfigSchema implements plugin.Configurable.
func (*Singularity) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "image", Type: plugin.String,
			Description: "the container image: an absolute path to a .sif file or sandbox directory, or a URI such as docker://debian:12-slim (pulled once per run)"},
		{Name: "binary", Type: plugin.String,
			Description: "the CLI to run (name on PATH or absolute path); default apptainer when on PATH, else singularity"},
		{Name: "workdir", Type: plugin.String, Default: d.Workdir,
			Description: "absolute path where the workspace is bound inside the container"},
		{Name: "default_timeout", Type: plugin.Duration, Default: d.DefaultTimeout,
			Description: "timeout of a command that sets none"},
		{Name: "max_output_bytes", Type: plugin.Number, Default: d.MaxOutputBytes,
			Description: "stdout and stderr kept together per command when it sets no cap"},
	}}
}

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (b *Singularity) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("singularity: decode config: %w", err)
	}
	var errs []error
	// No image is not a config error: the backend reports itself
	// unavailable with the fix, like a missing CLI.
	switch {
	case cfg.Image != "" && !isURI(cfg.Image) && !filepath.IsAbs(cfg.Image):
		errs = append(errs, fmt.Errorf("image %q: want an absolute path or a URI such as docker://debian:12-slim", cfg.Image))
	}
	if !path.IsAbs(cfg.Workdir) || path.Clean(cfg.Workdir) == "/" {
		errs = append(errs, fmt.Errorf("workdir %q: want an absolute path below / such as /workspace", cfg.Workdir))
	} else if strings.ContainsAny(cfg.Workdir, bindUnsafe) {
		errs = append(errs, fmt.Errorf("workdir %q: Apptainer bind specifications cannot carry ':' or ','", cfg.Workdir))
	}
	d, err := time.ParseDuration(cfg.DefaultTimeout)
	if err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("default_timeout %q: want a positive duration such as 10m", cfg.DefaultTimeout))
	}
	if cfg.MaxOutputBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_output_bytes %d: want a positive number of bytes", cfg.MaxOutputBytes))
	}
	if len(errs) > 0 {
		return fmt.Errorf("singularity: config: %w", errors.Join(errs...))
	}
	cfg.Workdir = path.Clean(cfg.Workdir)
	cfg.timeout = d
	cfg.stateDir = c.StateDir
	b.mu.Lock()
	b.cfg = cfg
	b.mu.Unlock()
	return nil
}

func (b *Singularity) settings() settings {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg
}

// isURI reports whether image names something to pull rather than a
// local file.
func isURI(image string) bool { return strings.Contains(image, "://") }
