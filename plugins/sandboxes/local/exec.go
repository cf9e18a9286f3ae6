package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// killGrace is how long a process group gets between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// baseEnv are the variables commands inherit from the plugin's own
// environment; everything else comes from the request.
var baseEnv = []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"}

var signals = map[string]syscall.Signal{
	"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}

// Exec implements sandbox.Sandbox. The command runs in its own process
// group; when it exits, times out or is cancelled, the whole group is
// killed, so nothing it started in the background survives it.
func (l *Local) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	stderr := orDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: local: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("local: empty argv")
	}
	if what := unsupportedLimit(req.Limits); what != "" {
		return refuse("cannot enforce a %s limit; use local-hardened or docker", what)
	}
	dir, policy, err := l.workdir(req)
	if err != nil {
		return refuse("%v", err)
	}
	if hit := deniedPath(policy.DeniedPaths, dir, req.Argv); hit != "" {
		return refuse("%s is a denied path; the command was not run", hit)
	}
	env := l.env(req.Env, policy.EnvAllowlist)
	path, err := lookPath(req.Argv[0], dir, envValue(env, "PATH"))
	if err != nil {
		fmt.Fprintf(stderr, "sparrow: local: command not found: %s\n", req.Argv[0])
		return sandbox.Exit{Code: 127}, nil
	}
	cfg := l.settings()
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = cfg.timeout
	}
	limit := req.Limits.MaxOutputBytes
	if limit <= 0 {
		limit = cfg.MaxOutputBytes
	}
	return run(ctx, &exec.Cmd{Path: path, Args: req.Argv, Dir: dir, Env: env, SysProcAttr: procAttr()}, sio, timeout, limit)
}

// unsupportedLimit names a requested limit this backend cannot enforce.
func unsupportedLimit(l sandbox.Limits) string {
	switch {
	case l.MemoryBytes > 0:
		return "memory"
	case l.MaxPids > 0:
		return "process count"
	case l.DiskBytes > 0:
		return "disk"
	case l.CPUTime > 0:
		return "CPU time"
	}
	return ""
}

// env builds a command's environment: the base variables (only those in
// the allowlist, when the policy has one) and the request's own.
func (l *Local) env(extra map[string]string, allow []string) []string {
	vals := map[string]string{}
	for _, k := range baseEnv {
		if len(allow) > 0 && !slices.Contains(allow, k) {
			continue
		}
		if v := l.getenv(k); v != "" {
			vals[k] = v
		}
	}
	for k, v := range extra {
		vals[k] = v
	}
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	return out
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds name the way a shell would, with the command's PATH.
func lookPath(name, dir, path string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, executable(name)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return exec.ErrNotFound
	}
	return nil
}

// run starts cmd and supervises it to the end.
func run(ctx context.Context, cmd *exec.Cmd, sio sandbox.IO, timeout time.Duration, limit int64) (sandbox.Exit, error) {
	out := &cappedOutput{left: limit}
	var copiers sync.WaitGroup
	closeAfterStart, err := wireOutput(cmd, sio, out, &copiers)
	if err != nil {
		return sandbox.Exit{}, err
	}
	stdinR, stdinW, err := wireStdin(cmd, sio.Stdin)
	if err != nil {
		return sandbox.Exit{}, err
	}
	if stdinR != nil {
		closeAfterStart = append(closeAfterStart, stdinR)
	}
	began := time.Now()
	err = cmd.Start()
	for _, f := range closeAfterStart {
		f.Close()
	}
	if err != nil {
		if stdinW != nil {
			stdinW.Close()
		}
		fmt.Fprintf(orDiscard(sio.Stderr), "sparrow: local: %v\n", err)
		copiers.Wait()
		return sandbox.Exit{Code: 126}, nil
	}
	if stdinW != nil {
		go func() {
			_, _ = io.Copy(stdinW, sio.Stdin)
			stdinW.Close()
		}()
	}
	pgid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut bool
	var killTimer <-chan time.Time
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-waited:
			break loop
		case <-timer.C:
			timedOut = true
			killTimer = terminate(pgid)
		case <-ctx.Done():
			if killTimer == nil {
				killTimer = terminate(pgid)
			}
		case <-killTimer:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		case name, ok := <-sio.Signals:
			if !ok {
				sio.Signals = nil
				continue
			}
			if sig, known := signals[name]; known {
				_ = syscall.Kill(-pgid, sig)
			}
		}
	}
	// Whatever the command left running in its group goes with it; that
	// also closes the output pipes those leftovers held open.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	copiers.Wait()
	if stdinW != nil {
		stdinW.Close()
	}
	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.truncated(), TimedOut: timedOut}
	exit.Code, exit.Signal = status(cmd.ProcessState, waitErr)
	if timedOut {
		exit.Code = 124
	}
	return exit, nil
}

// terminate asks the group to stop and returns when to insist.
func terminate(pgid int) <-chan time.Time {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	return time.After(killGrace)
}

func status(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		return 1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		for name, s := range signals {
			if s == sig {
				return 128 + int(sig), name
			}
		}
		return 128 + int(sig), strings.ToUpper(strings.TrimPrefix(sig.String(), "signal "))
	}
	return ps.ExitCode(), ""
}

// wireOutput gives the command real pipes, so its exit is seen at once even
// when children it started in the background still hold them.
func wireOutput(cmd *exec.Cmd, sio sandbox.IO, out *cappedOutput, copiers *sync.WaitGroup) ([]*os.File, error) {
	var childEnds []*os.File
	for _, w := range []struct {
		dst io.Writer
		set func(*os.File)
	}{
		{orDiscard(sio.Stdout), func(f *os.File) { cmd.Stdout = f }},
		{orDiscard(sio.Stderr), func(f *os.File) { cmd.Stderr = f }},
	} {
		r, wr, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("local: pipe: %w", err)
		}
		w.set(wr)
		childEnds = append(childEnds, wr)
		copiers.Go(func() {
			defer r.Close()
			_, _ = io.Copy(out.writer(w.dst), r)
		})
	}
	return childEnds, nil
}

// wireStdin feeds stdin through a pipe the caller copies into after start;
// nil stdin means /dev/null. It returns the child's end, to close in the
// parent once started, and the parent's end.
func wireStdin(cmd *exec.Cmd, stdin io.Reader) (*os.File, *os.File, error) {
	if stdin == nil {
		return nil, nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("local: pipe: %w", err)
	}
	cmd.Stdin = r
	return r, w, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// cappedOutput counts stdout and stderr together and drops what exceeds
// the cap, remembering that it did.
type cappedOutput struct {
	mu      sync.Mutex
	left    int64
	dropped bool
}

func (c *cappedOutput) truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

func (c *cappedOutput) writer(dst io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		n := int64(len(p))
		if n > c.left {
			n = c.left
			c.dropped = true
		}
		c.left -= n
		c.mu.Unlock()
		if n > 0 {
			if _, err := dst.Write(p[:n]); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
