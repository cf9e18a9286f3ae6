package docker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// readyLine is what the container's main process prints once it runs.
const readyLine = "sparrow-ready"

// mainScript is the container's main process (under --init): it says it
// runs, then reads its stdin until it closes. That stdin is the attached
// stdin of `docker run -i`, which this plugin holds open: -i sets
// StdinOnce, so when the plugin and its docker CLI die, stdin closes, the
// process and the container end, and --rm removes it.
const mainScript = "echo " + readyLine + "; exec cat >/dev/null"

const (
	// rmTimeout bounds `docker rm -f`.
	rmTimeout = 30 * time.Second
	// releaseWait is how long the attached `docker run` gets to end once
	// its container is gone, before it is killed.
	releaseWait = 5 * time.Second
	// cleanupTimeout keeps Cleanup within the two seconds it gets.
	cleanupTimeout = 1500 * time.Millisecond
)

// session is a run's container and the policy its commands run under.
type session struct {
	id string
	// name is the container's name, sparrow-ID.
	name string
	// root is the workspace as the caller named it, realRoot with
	// symlinks resolved: the bind mount's source.
	root, realRoot string
	policy         sandbox.Policy
	cfg            settings

	// run is the attached `docker run -i`; closing stdin ends the
	// container. exited is closed once run has been waited for, waitErr
	// and runErr (its stderr's tail) set before.
	run       *exec.Cmd
	stdin     io.WriteCloser
	closeOnce sync.Once
	runErr    tailBuffer
	exited    chan struct{}
	waitErr   error
}

// Prepare implements sandbox.Sandbox: it starts the run's container, the
// workspace bind-mounted at the configured workdir, denied paths masked,
// read-only paths bound read-only, network off unless the policy allows
// it. It returns once the container's main process runs.
func (d *Docker) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	cfg := d.settings()
	ws := req.Workspace
	if !filepath.IsAbs(ws) {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: workspace %s is not a directory", ws)
	}
	realRoot, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: resolve workspace: %w", err)
	}
	if reason := d.unavailable(ctx, cfg); reason != "" {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: %s", reason)
	}
	mask, err := masks(realRoot, req.Policy.DeniedPaths)
	if err != nil {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: %w", err)
	}
	ro, rootRO, err := readOnly(ws, realRoot, req.Policy.ReadOnlyPaths)
	if err != nil {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: %w", err)
	}
	ro = dropCovered(ro, mask)
	if n := len(mask) + len(ro); n > maxMounts {
		return sandbox.Session{}, fmt.Errorf("docker: prepare: the workspace needs %d masks and read-only binds, more than the %d this backend mounts; remove denied files from it or narrow the denied paths", n, maxMounts)
	}
	id := newID(req.RunID)
	s := &session{id: id, name: containerName(id), root: ws, realRoot: realRoot, policy: req.Policy, cfg: cfg}
	args := d.runArgs(s, req.RunID, mountArgs(realRoot, cfg.Workdir, rootRO, ro, mask))
	d.mu.Lock()
	d.starting = append(d.starting, s.name)
	d.mu.Unlock()
	err = d.start(ctx, s, args)
	d.mu.Lock()
	d.starting = without(d.starting, s.name)
	if err == nil {
		d.sessions[id] = s
	}
	d.mu.Unlock()
	if err != nil {
		return sandbox.Session{}, err
	}
	return sandbox.Session{ID: id, Workdir: cfg.Workdir}, nil
}

// runArgs is the `docker run` command line of a session's container.
func (d *Docker) runArgs(s *session, runID string, mounts []string) []string {
	cfg := s.cfg
	args := []string{"run", "-i", "--rm", "--init", "--name", s.name,
		"--label", "sparrow.run=" + runID, "--label", "sparrow.session=" + s.id,
		"--user", strconv.Itoa(d.uid) + ":" + strconv.Itoa(d.gid)}
	if !s.policy.AllowNetwork {
		args = append(args, "--network", "none")
	}
	if cfg.CPUs != "" {
		args = append(args, "--cpus", cfg.CPUs)
	}
	if cfg.Memory != "" {
		// Swap equal to memory: the limit holds for memory and swap together.
		args = append(args, "--memory", cfg.Memory, "--memory-swap", cfg.Memory)
	}
	if cfg.PidsLimit > 0 {
		args = append(args, "--pids-limit", strconv.FormatInt(cfg.PidsLimit, 10))
	}
	args = append(args, "--pull", cfg.Pull)
	args = append(args, mounts...)
	return append(args, "--entrypoint", "sh", cfg.Image, "-c", mainScript)
}

// start runs `docker run` for s and waits until its main process says it
// runs, the run fails, ctx ends or start_timeout passes. The docker CLI
// outlives this call: it is the container's lifeline.
func (d *Docker) start(ctx context.Context, s *session, args []string) error {
	cmd := d.command(context.Background(), s.cfg.Docker, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("docker: prepare: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("docker: prepare: %w", err)
	}
	cmd.Stderr = &s.runErr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("docker: prepare: %w", cliError(err, ""))
	}
	s.run, s.stdin, s.exited = cmd, stdin, make(chan struct{})
	ready := make(chan struct{})
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if strings.TrimSpace(line) == readyLine {
				close(ready)
				break
			}
			if err != nil {
				break
			}
		}
		_, _ = io.Copy(io.Discard, r)
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	timer := time.NewTimer(s.cfg.startTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-s.exited:
		err := s.waitErr
		if err == nil {
			err = fmt.Errorf("it ended at once")
		}
		return fmt.Errorf("docker: prepare: docker run %s: %w", s.cfg.Image, cliError(err, s.runErr.String()))
	case <-ctx.Done():
		_ = d.remove(context.WithoutCancel(ctx), s)
		return fmt.Errorf("docker: prepare: %w", ctx.Err())
	case <-timer.C:
		_ = d.remove(context.WithoutCancel(ctx), s)
		return fmt.Errorf("docker: prepare: the container did not start within %s (start_timeout; a pull counts); docker run said: %q",
			s.cfg.startTimeout, lastLine(s.runErr.String()))
	}
}

// Teardown implements sandbox.Sandbox: `docker rm -f` removes the
// container and everything running in it, and the attached `docker run`
// ends. Tearing down an unknown or released session is not an error.
func (d *Docker) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	d.mu.Lock()
	s, ok := d.sessions[id]
	delete(d.sessions, id)
	d.mu.Unlock()
	if !ok {
		return sandbox.Released{}, nil
	}
	if err := d.remove(ctx, s); err != nil {
		return sandbox.Released{}, fmt.Errorf("docker: teardown: %w; find what is left with docker ps -a --filter label=sparrow.session=%s", err, s.id)
	}
	return sandbox.Released{}, nil
}

// Cleanup implements plugin.Cleaner: when the kernel dies, every container
// this plugin started is removed. Closing their stdin alone would end
// them; `docker rm -f` does not wait for that.
func (d *Docker) Cleanup() {
	d.mu.Lock()
	byCLI := map[string][]string{}
	var live []*session
	for _, s := range d.sessions {
		byCLI[s.cfg.Docker] = append(byCLI[s.cfg.Docker], s.name)
		live = append(live, s)
	}
	if len(d.starting) > 0 {
		cli := d.cfg.Docker
		byCLI[cli] = append(byCLI[cli], d.starting...)
	}
	d.mu.Unlock()
	for _, s := range live {
		s.closeStdin()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for cli, names := range byCLI {
		wg.Go(func() { _ = d.rm(ctx, cli, names...) })
	}
	wg.Wait()
	for _, s := range live {
		killGroup(s.run.Process)
	}
}

// remove ends a session's container: `docker rm -f`, then the attached
// `docker run`.
func (d *Docker) remove(ctx context.Context, s *session) error {
	err := d.rm(ctx, s.cfg.Docker, s.name)
	s.release()
	return err
}

// rm runs `docker rm -f NAME...`. A container already gone is not an
// error; the docker CLI reports those on stderr, with exit status 0 or 1
// depending on its version, so stderr decides.
func (d *Docker) rm(ctx context.Context, cli string, names ...string) error {
	ctx, cancel := context.WithTimeout(ctx, rmTimeout)
	defer cancel()
	var errOut bytes.Buffer
	cmd := d.command(ctx, cli, append([]string{"rm", "-f"}, names...)...)
	cmd.Stderr = &errOut
	err := cmd.Run()
	gone, other := classifyRm(errOut.String())
	switch {
	case other:
		if err == nil {
			err = fmt.Errorf("docker rm reported errors")
		}
	case err != nil && gone:
		return nil
	case err == nil:
		return nil
	}
	return fmt.Errorf("docker rm -f %s: %w", strings.Join(names, " "), cliError(err, errOut.String()))
}

// classifyRm reads docker rm's stderr: gone is set when a line says a
// container does not exist (or is being removed already), other when a
// line says anything else.
func classifyRm(stderr string) (gone, other bool) {
	for _, line := range strings.Split(stderr, "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		switch {
		case l == "":
		case strings.Contains(l, "no such container"), strings.Contains(l, "already in progress"):
			gone = true
		default:
			other = true
		}
	}
	return gone, other
}

// release closes the container's stdin and waits for the attached
// `docker run` to end, killing it when it does not.
func (s *session) release() {
	s.closeStdin()
	if s.exited == nil {
		return
	}
	select {
	case <-s.exited:
		return
	case <-time.After(releaseWait):
	}
	killGroup(s.run.Process)
	select {
	case <-s.exited:
	case <-time.After(releaseWait):
	}
}

func (s *session) closeStdin() {
	s.closeOnce.Do(func() {
		if s.stdin != nil {
			_ = s.stdin.Close()
		}
	})
}

// stopped says why the container no longer runs, or "".
func (s *session) stopped() string {
	select {
	case <-s.exited:
	default:
		return ""
	}
	why := "it ended"
	if s.waitErr != nil {
		why = "docker run: " + s.waitErr.Error()
	}
	if l := lastLine(s.runErr.String()); l != "" {
		why += ": " + l
	}
	return fmt.Sprintf("the container %s has stopped (%s); this session can run nothing more", s.name, why)
}

func (d *Docker) session(id string) (*session, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.sessions[id]
	return s, ok
}

// newID names a session after its run, with a random suffix so two
// Prepares for one run never collide.
func newID(runID string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails since Go 1.24
	if runID == "" {
		runID = "docker"
	}
	return runID + "-" + hex.EncodeToString(b)
}

// nameUnsafe are the characters a container name may not hold
// ([a-zA-Z0-9][a-zA-Z0-9_.-]*).
var nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// containerName is the container of session id: sparrow-ID, with what a
// container name cannot hold replaced.
func containerName(id string) string {
	return "sparrow-" + nameUnsafe.ReplaceAllString(id, "-")
}

// without is list less its first v.
func without(list []string, v string) []string {
	for i, x := range list {
		if x == v {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// tailBuffer keeps the last 4 KiB written, for explaining failures.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
