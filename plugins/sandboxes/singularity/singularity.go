package singularity

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// installDocs is where the fix for a missing CLI is documented.
const installDocs = "https://apptainer.org/docs/admin/main/installation.html"

// fixInstall is quoted, after "singularity: ", in every refusal about a
// missing CLI when none is configured.
const fixInstall = "neither apptainer nor singularity is on PATH: install Apptainer (" + installDocs + ")"

// toolEnv names the plugin variables the apptainer process itself gets:
// where to find it, its config and caches, and the systemd user session
// rootless cgroups need. --cleanenv keeps every one of them from the
// command.
var toolEnv = []string{"PATH", "HOME", "APPTAINER_CACHEDIR", "SINGULARITY_CACHEDIR", "APPTAINER_TMPDIR",
	"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"}

// Singularity is the Apptainer / SingularityCE backend. The zero value is
// not usable; call New.
type Singularity struct {
	mu       sync.Mutex
	sessions map[string]*session
	cfg      settings
	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
	// uid and cgroupRoot describe this machine for the cgroup checks;
	// tests replace them.
	uid        func() int
	cgroupRoot string
	// live are the process groups of running commands.
	live proc.Groups
}

// New returns the backend with default settings. It has no image until
// configured.
func New() *Singularity {
	return &Singularity{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv,
		uid: os.Getuid, cgroupRoot: "/sys/fs/cgroup"}
}

// Name implements sandbox.Sandbox.
func (*Singularity) Name() string { return "singularity" }

// Description implements plugin.Describer.
func (b *Singularity) Description() string {
	cfg := b.settings()
	image := cfg.Image
	if image == "" {
		image = "no image configured"
	}
	return "runs each command with apptainer exec --containall in " + image + " (workspace bound at " + cfg.Workdir + ")"
}

// Capabilities implements sandbox.Sandbox. Network control is
// `--net --network none`, which Apptainer allows every user; the
// filesystem is the image plus the bound workspace; limits are the
// timeout and output cap always, memory and process count through cgroups
// where this machine allows them (checked per command); the workspace is
// the user's own directory, bound, so it persists.
func (b *Singularity) Capabilities(context.Context) (sandbox.Capabilities, error) {
	reason := b.unavailable(b.settings())
	return sandbox.Capabilities{
		Available:           reason == "",
		UnavailableReason:   reason,
		NetworkControl:      true,
		FilesystemIsolation: true,
		ResourceLimits:      true,
		PersistentWorkspace: true,
		Remote:              false,
	}, nil
}

// unavailable says why the backend cannot run, prefixed with its name as
// the kernel shows it, or "".
func (b *Singularity) unavailable(cfg settings) string {
	if runtime.GOOS != "linux" {
		return "singularity: Apptainer runs only on Linux"
	}
	if _, err := b.binary(cfg); err != nil {
		return "singularity: " + err.Error()
	}
	if cfg.Image == "" {
		return `singularity: no image configured: set image in the sandbox "singularity" block to a .sif path or a URI such as docker://debian:12-slim`
	}
	return ""
}

// binary finds the CLI: the configured one, or apptainer, or singularity.
// The error says what is missing and how to fix it.
func (b *Singularity) binary(cfg settings) (string, error) {
	if cfg.Binary != "" {
		p, err := b.lookPath(cfg.Binary)
		if err != nil {
			return "", fmt.Errorf("binary %q not found: install Apptainer (%s), or fix `binary` in the sandbox \"singularity\" block", cfg.Binary, installDocs)
		}
		return p, nil
	}
	for _, name := range []string{"apptainer", "singularity"} {
		if p, err := b.lookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s", fixInstall)
}

// lookPath finds an executable on the plugin's own PATH.
func (b *Singularity) lookPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(b.getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// environ is the environment of the apptainer process: the toolEnv
// variables the plugin has, nothing else (APPTAINER_BIND, APPTAINERENV_*
// and the like would change what runs).
func (b *Singularity) environ() []string {
	var env []string
	for _, k := range toolEnv {
		if v := b.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

var (
	_ sandbox.Sandbox     = (*Singularity)(nil)
	_ plugin.Configurable = (*Singularity)(nil)
	_ plugin.Describer    = (*Singularity)(nil)
	_ plugin.Cleaner      = (*Singularity)(nil)
)
