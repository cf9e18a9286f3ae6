package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// fixInstall is quoted in every refusal about a missing docker CLI.
const fixInstall = "the docker CLI was not found on PATH: install Docker (https://docs.docker.com/get-docker/), " +
	"or set `docker` in the sandbox \"docker\" block to the CLI's path; Sparrow talks to the engine only through it"

// infoTimeout bounds the `docker info` that checks for an engine.
const infoTimeout = 5 * time.Second

// cliEnv are the plugin's variables the docker CLI gets. None of them
// reaches a command.
var cliEnv = []string{"PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"}

// Docker is the Docker backend. The zero value is not usable; call New.
type Docker struct {
	mu       sync.Mutex
	sessions map[string]*session
	// starting are the names of containers being started, so that
	// Cleanup removes them too.
	starting []string
	cfg      settings
	// getenv reads the plugin's own environment; tests replace it.
	getenv func(string) string
	// uid and gid are who the container runs as.
	uid, gid int
}

// New returns the backend with default settings.
func New() *Docker {
	return &Docker{sessions: map[string]*session{}, cfg: defaultSettings(), getenv: os.Getenv,
		uid: os.Getuid(), gid: os.Getgid()}
}

// Name implements sandbox.Sandbox.
func (*Docker) Name() string { return "docker" }

// Description implements plugin.Describer.
func (d *Docker) Description() string {
	cfg := d.settings()
	return "runs commands in a Docker container (" + cfg.Image + ") through the docker CLI; the workspace is bind-mounted at " + cfg.Workdir
}

// Capabilities implements sandbox.Sandbox. It asks the engine with
// `docker info`; without one the backend is unavailable and says how to
// fix that.
func (d *Docker) Capabilities(ctx context.Context) (sandbox.Capabilities, error) {
	reason := d.unavailable(ctx, d.settings())
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

// unavailable says why the backend cannot run, or "": no CLI, or no engine
// answering `docker info --format {{.ServerVersion}}`.
func (d *Docker) unavailable(ctx context.Context, cfg settings) string {
	if _, err := d.lookPath(cfg.Docker); err != nil {
		return fixInstall
	}
	ctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := d.command(ctx, cfg.Docker, "info", "--format", "{{.ServerVersion}}")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return noEngine("`docker info` did not answer within " + infoTimeout.String())
	case err != nil && lastLine(errOut.String()) != "":
		return noEngine("`docker info` failed: " + lastLine(errOut.String()))
	case err != nil:
		return noEngine("`docker info` failed: " + err.Error())
	case strings.TrimSpace(out.String()) == "":
		return noEngine("`docker info` reported no server version")
	}
	return ""
}

// noEngine is the reason given when the CLI cannot reach an engine.
func noEngine(detail string) string {
	return "no Docker engine reachable (" + detail + "): install Docker or start the daemon; Sparrow talks to it through the docker CLI"
}

// isNoEngine recognises the docker CLI's messages for an engine it cannot
// reach ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.
// Is the docker daemon running?", "error during connect: ...").
func isNoEngine(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "cannot connect to the docker daemon") || strings.Contains(s, "error during connect") ||
		strings.Contains(s, "is the docker daemon running")
}

// lookPath finds the CLI on the plugin's own PATH.
func (d *Docker) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(d.getenv("PATH")) {
		if dir == "" {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// environ is the docker CLI's environment: the plugin's own, which the
// kernel narrowed to what the manifest declares, minus what only a
// command could want.
func (d *Docker) environ() []string {
	var env []string
	for _, k := range cliEnv {
		if v := d.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// command prepares the docker CLI, found on the plugin's own PATH, with the
// CLI's environment, in its own process group that dies with the plugin.
func (d *Docker) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = d.environ()
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = 2 * time.Second
	if p, err := d.lookPath(name); err == nil {
		cmd.Path, cmd.Err = p, nil
	} else {
		cmd.Err = fmt.Errorf("%s: %w", name, exec.ErrNotFound)
	}
	return cmd
}

// cliError explains a failed docker CLI run from its stderr.
func cliError(err error, stderr string) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return errors.New(fixInstall)
	case isNoEngine(stderr):
		return errors.New(noEngine(lastLine(stderr)))
	case lastLine(stderr) != "":
		return fmt.Errorf("%w: %s", err, lastLine(stderr))
	}
	return err
}

// lastLine is the last non-empty line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

var (
	_ sandbox.Sandbox     = (*Docker)(nil)
	_ plugin.Configurable = (*Docker)(nil)
	_ plugin.Describer    = (*Docker)(nil)
	_ plugin.Cleaner      = (*Docker)(nil)
)
