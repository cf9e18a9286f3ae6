package localhardened

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// settings is the decoded `sandbox "local-hardened"` block.
type settings struct {
	DefaultTimeout string   `json:"default_timeout"`
	MaxOutputBytes int64    `json:"max_output_bytes"`
	Memory         string   `json:"memory"`
	Pids           int64    `json:"pids"`
	Disk           string   `json:"disk"`
	CPUTime        string   `json:"cpu_time"`
	DenyRead       []string `json:"deny_read"`
	DenyWrite      []string `json:"deny_write"`
	ExtraRead      []string `json:"extra_read"`
	ExtraWrite     []string `json:"extra_write"`

	timeout time.Duration
	cpu     time.Duration
	memory  int64
	disk    int64
}

func defaultSettings() settings {
	return settings{DefaultTimeout: "10m", MaxOutputBytes: 1 << 20, Memory: "4G", Pids: 1024,
		timeout: 10 * time.Minute, memory: 4 << 30}
}

// ConfigSchema implements plugin.Configurable.
func (*Hardened) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "default_timeout", Type: plugin.Duration, Default: d.DefaultTimeout,
			Description: "timeout of a command that sets none; the whole process tree is killed"},
		{Name: "max_output_bytes", Type: plugin.Number, Default: d.MaxOutputBytes,
			Description: "stdout and stderr kept together per command when it sets no cap"},
		{Name: "memory", Type: plugin.String, Default: d.Memory,
			Description: `memory of a command's whole process tree ("4G", "512M"; "" for none)`},
		{Name: "pids", Type: plugin.Number, Default: d.Pids,
			Description: "processes and threads a command may have at once (0 for no limit)"},
		{Name: "disk", Type: plugin.String, Default: "",
			Description: `bytes a command may write: each file, the private /tmp, and the workspace's filesystem in all ("1G"; "" for no limit)`},
		{Name: "cpu_time", Type: plugin.String, Default: "",
			Description: `CPU time of each process ("5m"; "" for no limit)`},
		{Name: "deny_read", Type: plugin.ListOfString, Default: []string{},
			Description: "paths that appear empty to commands (absolute, ~/..., or relative to the workspace)"},
		{Name: "deny_write", Type: plugin.ListOfString, Default: []string{},
			Description: "paths commands may read but not change"},
		{Name: "extra_read", Type: plugin.ListOfString, Default: []string{},
			Description: "host paths commands may read beyond the workspace and the system (toolchains, caches)"},
		{Name: "extra_write", Type: plugin.ListOfString, Default: []string{},
			Description: "host paths commands may write beyond the workspace (a shared build cache)"},
	}}
}

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (h *Hardened) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("local-hardened: decode config: %w", err)
	}
	var errs []error
	var err error
	if cfg.timeout, err = time.ParseDuration(cfg.DefaultTimeout); err != nil || cfg.timeout <= 0 {
		errs = append(errs, fmt.Errorf("default_timeout %q: want a positive duration such as 10m", cfg.DefaultTimeout))
	}
	if cfg.MaxOutputBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_output_bytes %d: want a positive number of bytes", cfg.MaxOutputBytes))
	}
	if cfg.Pids < 0 {
		errs = append(errs, fmt.Errorf("pids %d: want 0 (no limit) or more", cfg.Pids))
	}
	for _, sz := range []struct {
		name, val string
		dst       *int64
	}{{"memory", cfg.Memory, &cfg.memory}, {"disk", cfg.Disk, &cfg.disk}} {
		*sz.dst = 0
		if sz.val == "" {
			continue
		}
		if *sz.dst, err = sandbox.ParseSize(sz.val); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sz.name, err))
		}
	}
	if cfg.CPUTime != "" {
		if cfg.cpu, err = time.ParseDuration(cfg.CPUTime); err != nil || cfg.cpu <= 0 {
			errs = append(errs, fmt.Errorf("cpu_time %q: want a positive duration such as 5m", cfg.CPUTime))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("local-hardened: config: %w", errors.Join(errs...))
	}
	h.mu.Lock()
	h.cfg = cfg
	h.stateDir = c.StateDir
	h.mu.Unlock()
	return nil
}

func (h *Hardened) settings() settings {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg
}
