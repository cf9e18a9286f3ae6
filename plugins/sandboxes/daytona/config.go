package daytona

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "daytona"` block.
type settings struct {
	// CLI is the daytona CLI, a name on PATH or an absolute path.
	CLI string `json:"cli"`
	// Snapshot is what a created sandbox starts from (`--snapshot`);
	// empty means Daytona's default snapshot.
	Snapshot string `json:"snapshot"`
	// Target is the region (`--target`); empty means DAYTONA_TARGET, then
	// the organisation's default.
	Target string `json:"target"`
	// Sandbox names an existing sandbox to use instead of creating one; it
	// is never deleted.
	Sandbox string `json:"sandbox"`
	// Workdir is where the workspace lives in the sandbox.
	Workdir string `json:"workdir"`
	// Timeout is the timeout of a command that sets none.
	Timeout string `json:"timeout"`
	// AutoStop is the idle time, in minutes, after which Daytona stops a
	// created sandbox (`--auto-stop`); created sandboxes are also deleted
	// once stopped (`--auto-delete 0`), so one the plugin could not delete
	// does not outlive it by long.
	AutoStop int `json:"auto_stop"`

	timeout time.Duration
}

func defaultSettings() settings {
	return settings{CLI: "daytona", Workdir: "/home/daytona/workspace", Timeout: "30m", AutoStop: 60, timeout: 30 * time.Minute}
}

// ConfigSchema implements plugin.Configurable.
func (*Daytona) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "cli", Type: plugin.String, Default: d.CLI,
			Description: "the daytona CLI (name on PATH or absolute path)"},
		{Name: "snapshot", Type: plugin.String,
			Description: "snapshot a created sandbox starts from (daytona create --snapshot); empty for Daytona's default. It needs sh, tar, env and find"},
		{Name: "target", Type: plugin.String,
			Description: "region of a created sandbox (daytona create --target); empty for DAYTONA_TARGET, then the default"},
		{Name: "sandbox", Type: plugin.String,
			Description: "an existing Daytona sandbox (id or name) to use instead of creating one; never deleted by Sparrow"},
		{Name: "workdir", Type: plugin.String, Default: d.Workdir,
			Description: "absolute path of the workspace inside the sandbox"},
		{Name: "timeout", Type: plugin.Duration, Default: d.Timeout,
			Description: "timeout of a command that sets none"},
		{Name: "auto_stop", Type: plugin.Number, Default: d.AutoStop,
			Description: "minutes of inactivity after which Daytona stops (and then deletes) a sandbox Sparrow created; 0 disables"},
	}}
}

// validName is what a sandbox id or name may look like here: it is put in
// command lines and `ID:PATH` arguments.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (d *Daytona) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("daytona: decode config: %w", err)
	}
	var errs []error
	if cfg.CLI == "" {
		errs = append(errs, errors.New("cli: must not be empty"))
	}
	if cfg.Sandbox != "" && !validName.MatchString(cfg.Sandbox) {
		errs = append(errs, fmt.Errorf("sandbox %q: want a Daytona sandbox id or name (letters, digits, '-', '_', '.')", cfg.Sandbox))
	}
	if cfg.Sandbox != "" && (cfg.Snapshot != "" || cfg.Target != "") {
		errs = append(errs, errors.New("sandbox: an existing sandbox is used as it is; snapshot and target apply only to a sandbox Sparrow creates, set one or the other"))
	}
	if !path.IsAbs(cfg.Workdir) || path.Clean(cfg.Workdir) == "/" {
		errs = append(errs, fmt.Errorf("workdir %q: want an absolute path below / such as /home/daytona/workspace", cfg.Workdir))
	}
	t, err := time.ParseDuration(cfg.Timeout)
	if err != nil || t < time.Second {
		errs = append(errs, fmt.Errorf("timeout %q: want a duration of at least 1s such as 30m", cfg.Timeout))
	}
	if cfg.AutoStop < 0 {
		errs = append(errs, fmt.Errorf("auto_stop %d: want minutes, 0 or more", cfg.AutoStop))
	}
	if len(errs) > 0 {
		return fmt.Errorf("daytona: config: %w", errors.Join(errs...))
	}
	cfg.Workdir = path.Clean(cfg.Workdir)
	cfg.timeout = t
	d.mu.Lock()
	d.cfg = cfg
	d.mu.Unlock()
	return nil
}

func (d *Daytona) settings() settings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}
