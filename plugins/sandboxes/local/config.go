package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "local"` block.
type settings struct {
	// Shell is reported in the description; Exec never adds a shell, it
	// runs argv as given.
	Shell          string `json:"shell"`
	DefaultTimeout string `json:"default_timeout"`
	MaxOutputBytes int64  `json:"max_output_bytes"`

	timeout time.Duration
}

func defaultSettings() settings {
	return settings{Shell: "/bin/sh", DefaultTimeout: "10m", MaxOutputBytes: 1 << 20, timeout: 10 * time.Minute}
}

// ConfigSchema implements plugin.Configurable.
func (*Local) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "shell", Type: plugin.String, Default: d.Shell,
			Description: "the shell this machine's commands are written for; reported only, argv is run as given"},
		{Name: "default_timeout", Type: plugin.Duration, Default: d.DefaultTimeout,
			Description: "timeout of a command that sets none"},
		{Name: "max_output_bytes", Type: plugin.Number, Default: d.MaxOutputBytes,
			Description: "stdout and stderr kept together per command when it sets no cap"},
	}}
}

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (l *Local) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("local: decode config: %w", err)
	}
	var errs []error
	if !filepath.IsAbs(cfg.Shell) {
		errs = append(errs, fmt.Errorf("shell %q: want an absolute path such as /bin/sh", cfg.Shell))
	}
	d, err := time.ParseDuration(cfg.DefaultTimeout)
	if err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("default_timeout %q: want a positive duration such as 10m", cfg.DefaultTimeout))
	}
	if cfg.MaxOutputBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_output_bytes %d: want a positive number of bytes", cfg.MaxOutputBytes))
	}
	if len(errs) > 0 {
		return fmt.Errorf("local: config: %w", errors.Join(errs...))
	}
	cfg.timeout = d
	l.mu.Lock()
	l.cfg = cfg
	l.mu.Unlock()
	return nil
}

func (l *Local) settings() settings {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}
