package docker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "docker"` block.
type settings struct {
	// Docker is the docker CLI, a name on PATH or an absolute path.
	Docker string `json:"docker"`
	// Image is the image every run's container starts from.
	Image string `json:"image"`
	// Pull is `docker run --pull`: always, missing or never.
	Pull string `json:"pull"`
	// Workdir is where the workspace is mounted in the container.
	Workdir string `json:"workdir"`
	// CPUs, Memory and PidsLimit are the container's limits (`--cpus`,
	// `--memory`, `--pids-limit`); empty or 0 means none.
	CPUs      string `json:"cpus"`
	Memory    string `json:"memory"`
	PidsLimit int64  `json:"pids_limit"`
	// DefaultTimeout bounds a command that sets no timeout.
	DefaultTimeout string `json:"default_timeout"`
	// StartTimeout bounds Prepare's `docker run`, a pull included.
	StartTimeout string `json:"start_timeout"`
	// MaxOutputBytes caps a command's stdout and stderr together when it
	// sets no cap.
	MaxOutputBytes int64 `json:"max_output_bytes"`

	memory                int64 // Memory in bytes, 0 for none
	timeout, startTimeout time.Duration
}

func defaultSettings() settings {
	return settings{Docker: "docker", Image: "debian:12-slim", Pull: "missing", Workdir: "/workspace",
		PidsLimit: 4096, DefaultTimeout: "10m", StartTimeout: "5m", MaxOutputBytes: 1 << 20,
		timeout: 10 * time.Minute, startTimeout: 5 * time.Minute}
}

// ConfigSchema implements plugin.Configurable.
func (*Docker) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "docker", Type: plugin.String, Default: d.Docker,
			Description: "the docker CLI (name on PATH or absolute path); Sparrow talks to the engine only through it"},
		{Name: "image", Type: plugin.String, Default: d.Image,
			Description: "image of the run's container; needs /bin/sh"},
		{Name: "pull", Type: plugin.String, Default: d.Pull,
			Description: "docker run --pull policy: always, missing or never"},
		{Name: "workdir", Type: plugin.String, Default: d.Workdir,
			Description: "absolute path where the workspace is bind-mounted in the container"},
		{Name: "cpus", Type: plugin.String, Default: d.CPUs,
			Description: `CPUs the container may use (docker run --cpus), such as "2" or "1.5"; empty for no limit`},
		{Name: "memory", Type: plugin.String, Default: d.Memory,
			Description: `memory limit of the container, swap included (docker run --memory and --memory-swap), such as "4g"; empty for no limit`},
		{Name: "pids_limit", Type: plugin.Number, Default: d.PidsLimit,
			Description: "processes the container may hold at once (docker run --pids-limit); 0 for no limit"},
		{Name: "default_timeout", Type: plugin.Duration, Default: d.DefaultTimeout,
			Description: "timeout of a command that sets none"},
		{Name: "start_timeout", Type: plugin.Duration, Default: d.StartTimeout,
			Description: "how long starting the container (and pulling its image) may take"},
		{Name: "max_output_bytes", Type: plugin.Number, Default: d.MaxOutputBytes,
			Description: "stdout and stderr kept together per command when it sets no cap"},
	}}
}

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (d *Docker) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("docker: decode config: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Docker == "" {
		bad("docker: must not be empty")
	}
	if cfg.Image == "" || strings.HasPrefix(cfg.Image, "-") {
		bad("image %q: want an image reference such as debian:12-slim", cfg.Image)
	}
	if cfg.Pull != "always" && cfg.Pull != "missing" && cfg.Pull != "never" {
		bad("pull %q: want always, missing or never", cfg.Pull)
	}
	if !path.IsAbs(cfg.Workdir) || path.Clean(cfg.Workdir) == "/" {
		bad("workdir %q: want an absolute path below / such as /workspace", cfg.Workdir)
	}
	if cfg.CPUs != "" {
		if n, err := strconv.ParseFloat(cfg.CPUs, 64); err != nil || n <= 0 || math.IsInf(n, 0) {
			bad("cpus %q: want a positive number such as 2 or 1.5", cfg.CPUs)
		}
	}
	if cfg.Memory != "" {
		n, err := parseBytes(cfg.Memory)
		if err != nil || n < minMemory {
			bad("memory %q: want a size of at least 6m, such as 512m or 4g", cfg.Memory)
		}
		cfg.memory = n
	}
	if cfg.PidsLimit < 0 {
		bad("pids_limit %d: want 0 (no limit) or a positive number", cfg.PidsLimit)
	}
	var err error
	if cfg.timeout, err = time.ParseDuration(cfg.DefaultTimeout); err != nil || cfg.timeout <= 0 {
		bad("default_timeout %q: want a positive duration such as 10m", cfg.DefaultTimeout)
	}
	if cfg.startTimeout, err = time.ParseDuration(cfg.StartTimeout); err != nil || cfg.startTimeout <= 0 {
		bad("start_timeout %q: want a positive duration such as 5m", cfg.StartTimeout)
	}
	if cfg.MaxOutputBytes <= 0 {
		bad("max_output_bytes %d: want a positive number of bytes", cfg.MaxOutputBytes)
	}
	if len(errs) > 0 {
		return fmt.Errorf("docker: config: %w", errors.Join(errs...))
	}
	cfg.Workdir = path.Clean(cfg.Workdir)
	d.mu.Lock()
	d.cfg = cfg
	d.mu.Unlock()
	return nil
}

func (d *Docker) settings() settings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// minMemory is the smallest memory limit Docker accepts.
const minMemory = 6 << 20

// sizePattern is the size syntax the docker CLI accepts for --memory
// (github.com/docker/go-units RAMInBytes): a number, an optional binary
// unit, an optional "i" and "b".
var sizePattern = regexp.MustCompile(`^(\d+(?:\.\d+)?) ?([kKmMgGtTpP])?[iI]?[bB]?$`)

// parseBytes reads a size the way the docker CLI reads --memory: units
// are powers of 1024.
func parseBytes(s string) (int64, error) {
	m := sizePattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	if m[2] != "" {
		n *= math.Pow(1024, float64(strings.IndexByte("kmgtp", strings.ToLower(m[2])[0])+1))
	}
	if n >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n), nil
}
