// Package shelltest is a stand-in for the kernel's Host in tests: an
// Executor that really runs each request's argv with os/exec in a
// directory, streaming output as it comes, and records what it was asked.
// It enforces no policy; it is for tests only.
package shelltest

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Executor runs commands under Root. The zero value is not usable; set
// Root.
type Executor struct {
	// Root is the workspace: relative workdirs are joined to it.
	Root string

	mu    sync.Mutex
	calls []sandbox.ExecRequest
}

// Calls returns the requests seen so far.
func (e *Executor) Calls() []sandbox.ExecRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]sandbox.ExecRequest(nil), e.calls...)
}

// Exec runs req to completion. A timeout kills the whole process group and
// reports exit 124, TimedOut; output beyond MaxOutputBytes is dropped and
// reported; a missing command exits 127, as a shell would.
func (e *Executor) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	e.mu.Lock()
	e.calls = append(e.calls, req)
	e.mu.Unlock()
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("shelltest: empty argv")
	}
	runCtx := ctx
	if req.Limits.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, req.Limits.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, req.Argv[0], req.Argv[1:]...)
	cmd.Dir = e.Root
	if req.Workdir != "" {
		cmd.Dir = req.Workdir
		if !filepath.IsAbs(req.Workdir) {
			cmd.Dir = filepath.Join(e.Root, req.Workdir)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	limit := &limiter{left: req.Limits.MaxOutputBytes}
	cmd.Stdout = limit.wrap(sio.Stdout)
	cmd.Stderr = limit.wrap(sio.Stderr)
	if sio.Stdin != nil {
		cmd.Stdin = sio.Stdin
	}
	start := time.Now()
	err := cmd.Run()
	exit := sandbox.Exit{Duration: time.Since(start), OutputTruncated: limit.truncated()}
	var ee *exec.ExitError
	switch {
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		exit.Code, exit.TimedOut = 124, true
	case ctx.Err() != nil:
		return exit, ctx.Err()
	case errors.As(err, &ee):
		exit.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			exit.Code, exit.Signal = 128+int(ws.Signal()), signalName(ws.Signal())
		}
	case errors.Is(err, exec.ErrNotFound):
		exit.Code = 127
	case err != nil:
		return exit, err
	}
	return exit, nil
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGINT:
		return "INT"
	}
	return s.String()
}

// limiter drops output beyond a budget shared by stdout and stderr.
type limiter struct {
	mu      sync.Mutex
	left    int64 // 0: no limit
	dropped bool
}

func (l *limiter) wrap(w io.Writer) io.Writer {
	if w == nil {
		w = io.Discard
	}
	return writerFunc(func(p []byte) (int, error) {
		n := len(p)
		l.mu.Lock()
		if l.left > 0 {
			if int64(len(p)) > l.left {
				p, l.dropped = p[:l.left], true
			}
			l.left -= int64(len(p))
			if l.left == 0 {
				l.left = -1
			}
		} else if l.left < 0 {
			p, l.dropped = nil, true
		}
		l.mu.Unlock()
		if len(p) > 0 {
			if _, err := w.Write(p); err != nil {
				return 0, err
			}
		}
		return n, nil
	})
}

func (l *limiter) truncated() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

var _ sandbox.Executor = (*Executor)(nil)
