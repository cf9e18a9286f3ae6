package modal

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "modal"` block.
type settings struct {
	// App is the Modal App the sandbox is created in (App.lookup with
	// create_if_missing=True).
	App string `json:"app"`
	// Image is a registry image (Image.from_registry).
	Image string `json:"image"`
	// Python runs the embedded SDK helper; it must have `modal` installed.
	Python string `json:"python"`
	// Modal is the modal CLI.
	Modal string `json:"modal"`
	// Container names an existing container to use instead of creating
	// one; it is never stopped.
	Container string `json:"container"`
	// Workdir is where the workspace lives in the container.
	Workdir string `json:"workdir"`
	// Timeout is the sandbox's lifetime, and the default per command.
	Timeout string `json:"timeout"`

	timeout time.Duration
}

func defaultSettings() settings {
	return settings{App: "sparrow", Image: "debian:12-slim", Python: "python3", Modal: "modal",
		Workdir: "/workspace", Timeout: "30m", timeout: 30 * time.Minute}
}

// ConfigSchema implements plugin.Configurable.
func (*Modal) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "app", Type: plugin.String, Default: d.App,
			Description: "Modal App the sandbox is created in (looked up, created if missing)"},
		{Name: "image", Type: plugin.String, Default: d.Image,
			Description: "registry image of the sandbox (modal.Image.from_registry); needs sh, tar and base64"},
		{Name: "python", Type: plugin.String, Default: d.Python,
			Description: "Python interpreter with the modal package installed; runs the sandbox create/sync helper"},
		{Name: "modal", Type: plugin.String, Default: d.Modal,
			Description: "the modal CLI (name on PATH or absolute path); runs commands and stops the sandbox"},
		{Name: "container", Type: plugin.String,
			Description: "an existing Modal container id to use instead of creating a sandbox; never stopped by Sparrow"},
		{Name: "workdir", Type: plugin.String, Default: d.Workdir,
			Description: "absolute path of the workspace inside the container"},
		{Name: "timeout", Type: plugin.Duration, Default: d.Timeout,
			Description: "lifetime of a created sandbox, and the timeout of a command that sets none"},
	}}
}

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (m *Modal) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("modal: decode config: %w", err)
	}
	var errs []error
	for name, v := range map[string]string{"app": cfg.App, "image": cfg.Image, "python": cfg.Python, "modal": cfg.Modal} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s: must not be empty", name))
		}
	}
	if !path.IsAbs(cfg.Workdir) || path.Clean(cfg.Workdir) == "/" {
		errs = append(errs, fmt.Errorf("workdir %q: want an absolute path below / such as /workspace", cfg.Workdir))
	}
	d, err := time.ParseDuration(cfg.Timeout)
	if err != nil || d < time.Second {
		errs = append(errs, fmt.Errorf("timeout %q: want a duration of at least 1s such as 30m", cfg.Timeout))
	}
	if len(errs) > 0 {
		return fmt.Errorf("modal: config: %w", errors.Join(errs...))
	}
	cfg.Workdir = path.Clean(cfg.Workdir)
	cfg.timeout = d
	m.mu.Lock()
	m.cfg = cfg
	m.mu.Unlock()
	return nil
}

func (m *Modal) settings() settings {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}
