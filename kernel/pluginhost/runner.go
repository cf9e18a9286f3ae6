package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/go-plugin/runner"
)

// procRunner runs a verified plugin executable as go-plugin's runner. It
// differs from go-plugin's own in what a trustworthy host needs: the exec
// path is the sealed copy, stdin is /dev/null, the environment is exactly
// what was granted, the process leads its own group (so a kill takes every
// child with it) and dies with the kernel (parent-death signal). A
// confined plugin's process is bubblewrap, which takes the sandbox with it.
type procRunner struct {
	name   string
	cmd    *exec.Cmd
	stdout *handshakeReader
	stderr io.ReadCloser
	pid    int
	// cleanup releases what confinement set up, once the process ended.
	cleanup func()

	mu      sync.Mutex
	started bool
}

// newRunner prepares m's process: confined to what a allows, or, when a
// is nil, as a plain child.
func (h *Host) newRunner(m *Manifest, a *access, exe *verified, env []string, socketDir string) (*procRunner, error) {
	if a == nil {
		return newProcRunner(m.Name, &exec.Cmd{Path: exe.Path, Args: []string{"sparrow-plugin-" + m.Name}, Env: env}, nil)
	}
	cc, err := h.confinedCmd(m, a, exe, env, socketDir)
	if err != nil {
		return nil, err
	}
	// bubblewrap's argv[0] does not matter to it; ps shows what it holds.
	cc.Args[0] = "sparrow-plugin-" + m.Name
	r, err := newProcRunner(m.Name, cc.Cmd, cc.Cleanup)
	if err != nil {
		cc.Cleanup()
	}
	return r, err
}

func newProcRunner(name string, cmd *exec.Cmd, cleanup func()) (*procRunner, error) {
	cmd.SysProcAttr = procAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &procRunner{name: name, cmd: cmd, stdout: newHandshakeReader(stdout), stderr: stderr, cleanup: cleanup}, nil
}

func (r *procRunner) Start(context.Context) error {
	err := r.cmd.Start()
	if err != nil {
		if r.cleanup != nil {
			r.cleanup()
		}
		return fmt.Errorf("exec: %w", err)
	}
	r.mu.Lock()
	r.started, r.pid = true, r.cmd.Process.Pid
	r.mu.Unlock()
	return nil
}

// wasStarted reports whether the process was started.
func (r *procRunner) wasStarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

func (r *procRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	if r.cleanup != nil {
		r.cleanup()
	}
	return err
}

// Kill ends the plugin and everything it started.
func (r *procRunner) Kill(context.Context) error {
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	if pid == 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.name }
func (r *procRunner) ID() string            { return strconv.Itoa(r.pid) }

func (r *procRunner) Diagnose(context.Context) string {
	return "the plugin did not complete the go-plugin handshake: it may not be a Sparrow plugin, may be built for another platform, or may have printed to stdout before serving"
}

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// handshakeReader passes the plugin's stdout through and remembers the
// first line, the go-plugin handshake, so a protocol mismatch can be
// reported in Sparrow's words.
type handshakeReader struct {
	io.ReadCloser
	once sync.Once
	mu   sync.Mutex
	line string
	buf  strings.Builder
}

func newHandshakeReader(rc io.ReadCloser) *handshakeReader { return &handshakeReader{ReadCloser: rc} }

func (h *handshakeReader) Read(p []byte) (int, error) {
	n, err := h.ReadCloser.Read(p)
	h.mu.Lock()
	if h.line == "" && h.buf.Len() < 4096 {
		h.buf.Write(p[:n])
		if s, _, ok := strings.Cut(h.buf.String(), "\n"); ok {
			h.line = s
		}
	}
	h.mu.Unlock()
	return n, err
}

// protocol returns the application protocol version the plugin announced,
// or 0 when it announced none.
func (h *handshakeReader) protocol() int {
	h.mu.Lock()
	line := h.line
	h.mu.Unlock()
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) < 4 {
		return 0
	}
	v, _ := strconv.Atoi(parts[1])
	return v
}

// hostEnv returns NAME=value for each declared name set in the environment.
func hostEnv(names []string, getenv func(string) (string, bool)) []string {
	var env []string
	for _, n := range names {
		if v, ok := getenv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

var _ runner.Runner = (*procRunner)(nil)
