package vercel

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "vercel-sandbox"` block.
type settings struct {
	// CLI is the Vercel Sandbox CLI, a name on PATH or an absolute path.
	CLI string `json:"cli"`
	// Runtime is the image of a created sandbox (`--runtime`); empty
	// means the CLI's default (node24).
	Runtime string `json:"runtime"`
	// Snapshot starts a created sandbox from a snapshot (`--snapshot`).
	Snapshot string `json:"snapshot"`
	// Team and Project scope every call (`--scope`, `--project`); empty
	// means VERCEL_TEAM_ID and VERCEL_PROJECT_ID, then what the CLI infers.
	Team    string `json:"team"`
	Project string `json:"project"`
	// Sandbox names an existing sandbox to use instead of creating one; it
	// is never removed.
	Sandbox string `json:"sandbox"`
	// Workdir is where the workspace lives in the sandbox.
	Workdir string `json:"workdir"`
	// Timeout is a created sandbox's lifetime (`--timeout`), and the
	// timeout of a command that sets none.
	Timeout string `json:"timeout"`

	timeout time.Duration
}

func defaultSettings() settings {
	return settings{CLI: "sandbox", Workdir: "/vercel/sandbox/workspace", Timeout: "45m", timeout: 45 * time.Minute}
}

// ConfigSchema implements plugin.Configurable.
func (*Vercel) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "cli", Type: plugin.String, Default: d.CLI,
			Description: "the Vercel Sandbox CLI, npm package `sandbox` (name on PATH or absolute path)"},
		{Name: "runtime", Type: plugin.String,
			Description: "runtime of a created sandbox (sandbox create --runtime: node22, node24, python3.13, ...); empty for the CLI's default"},
		{Name: "snapshot", Type: plugin.String,
			Description: "snapshot id a created sandbox starts from (sandbox create --snapshot); excludes runtime"},
		{Name: "team", Type: plugin.String,
			Description: "team of every call (--scope); empty for VERCEL_TEAM_ID, then what the CLI infers"},
		{Name: "project", Type: plugin.String,
			Description: "project of every call (--project); empty for VERCEL_PROJECT_ID, then what the CLI infers"},
		{Name: "sandbox", Type: plugin.String,
			Description: "an existing sandbox to use instead of creating one; never removed by Sparrow"},
		{Name: "workdir", Type: plugin.String, Default: d.Workdir,
			Description: "absolute path of the workspace inside the sandbox"},
		{Name: "timeout", Type: plugin.Duration, Default: d.Timeout,
			Description: "lifetime of a created sandbox (your plan's maximum applies), and the timeout of a command that sets none"},
	}}
}

// validName is what a sandbox name, team, project or snapshot may look
// like here: they are put in command lines and `NAME:PATH` arguments.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (v *Vercel) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("vercel-sandbox: decode config: %w", err)
	}
	var errs []error
	if cfg.CLI == "" {
		errs = append(errs, errors.New("cli: must not be empty"))
	}
	for _, a := range []struct{ name, value string }{{"sandbox", cfg.Sandbox}, {"snapshot", cfg.Snapshot}, {"runtime", cfg.Runtime}, {"team", cfg.Team}, {"project", cfg.Project}} {
		if a.value != "" && !validName.MatchString(a.value) {
			errs = append(errs, fmt.Errorf("%s %q: want letters, digits, '-', '_' or '.'", a.name, a.value))
		}
	}
	if cfg.Runtime != "" && cfg.Snapshot != "" {
		errs = append(errs, errors.New("runtime and snapshot: a sandbox starts from one or the other, set only one"))
	}
	if cfg.Sandbox != "" && (cfg.Runtime != "" || cfg.Snapshot != "") {
		errs = append(errs, errors.New("sandbox: an existing sandbox is used as it is; runtime and snapshot apply only to a sandbox Sparrow creates, set one or the other"))
	}
	if !path.IsAbs(cfg.Workdir) || path.Clean(cfg.Workdir) == "/" {
		errs = append(errs, fmt.Errorf("workdir %q: want an absolute path below / such as /vercel/sandbox/workspace", cfg.Workdir))
	}
	t, err := time.ParseDuration(cfg.Timeout)
	if err != nil || t < time.Second {
		errs = append(errs, fmt.Errorf("timeout %q: want a duration of at least 1s such as 45m", cfg.Timeout))
	}
	if len(errs) > 0 {
		return fmt.Errorf("vercel-sandbox: config: %w", errors.Join(errs...))
	}
	cfg.Workdir = path.Clean(cfg.Workdir)
	cfg.timeout = t
	v.mu.Lock()
	v.cfg = cfg
	v.mu.Unlock()
	return nil
}

func (v *Vercel) settings() settings {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cfg
}
