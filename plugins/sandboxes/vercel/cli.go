package vercel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

// killGrace is how long a CLI process gets after SIGTERM.
const killGrace = 2 * time.Second

// command prepares the CLI with args: found on the plugin's own PATH, with
// the environment from environ, in dir (the workspace: the CLI infers the
// team and project from a `.vercel/project.json` that `vercel link` wrote
// there), with no stdin, and in its own process group, so that a cancel
// stops it and what it started.
func (v *Vercel) command(ctx context.Context, cli, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = v.environ()
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		time.AfterFunc(killGrace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return nil
	}
	cmd.WaitDelay = killGrace + time.Second
	if p, err := v.lookPath(cli); err == nil {
		cmd.Path, cmd.Err = p, nil
	} else {
		cmd.Err = fmt.Errorf("%s: %w", cli, exec.ErrNotFound)
	}
	return cmd
}

// wait runs cmd to its end, recording its process group meanwhile so that
// Cleanup can end it when the kernel dies.
func (v *Vercel) wait(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	pgid := cmd.Process.Pid
	v.live.Add(pgid)
	defer v.live.Remove(pgid)
	return cmd.Wait()
}

// errLoginPrompt ends a CLI run that started an interactive login.
var errLoginPrompt = errors.New("the CLI started an interactive login")

// loginPrompts are what the CLI prints when it has no usable credentials
// and starts the OAuth device flow, which waits for a person
// (packages/sandbox/src/args/auth.ts, commands/login.ts).
var loginPrompts = []string{"Please log in again", "device authorization", "Waiting for authentication"}

// loginWatch calls hit once when the CLI's stderr shows a login prompt.
type loginWatch struct {
	mu   sync.Mutex
	tail []byte
	hit  func()
	done bool
}

func (w *loginWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	w.tail = append(w.tail, p...)
	for _, s := range loginPrompts {
		if bytes.Contains(w.tail, []byte(s)) {
			w.done = true
			w.hit()
			return len(p), nil
		}
	}
	if len(w.tail) > 256 {
		w.tail = w.tail[len(w.tail)-256:]
	}
	return len(p), nil
}

// call runs one CLI verb to its end in dir and returns its stdout. A
// failure says what went wrong and, where it can, how to fix it.
func (v *Vercel) call(ctx context.Context, cfg settings, dir string, timeout time.Duration, args ...string) ([]byte, error) {
	lctx, lcancel := context.WithCancelCause(ctx)
	defer lcancel(nil)
	tctx, cancel := context.WithTimeout(lctx, timeout)
	defer cancel()
	var out bytes.Buffer
	var errOut cliout.Tail
	cmd := v.command(tctx, cfg.CLI, dir, args...)
	cmd.Stdout = &out
	cmd.Stderr = io.MultiWriter(&errOut, &loginWatch{hit: func() { lcancel(errLoginPrompt) }})
	if err := v.wait(cmd); err != nil {
		switch {
		case errors.Is(context.Cause(lctx), errLoginPrompt):
			return out.Bytes(), fmt.Errorf("sandbox %s: the CLI asked for an interactive login (%s): %s", args[0], message(errOut.String()), fixLogin)
		case tctx.Err() != nil && ctx.Err() == nil && !errors.Is(err, exec.ErrNotFound):
			return out.Bytes(), fmt.Errorf("sandbox %s: no answer within %s", args[0], timeout)
		}
		return out.Bytes(), fmt.Errorf("sandbox %s: %w", args[0], cliError(err, errOut.String()))
	}
	return out.Bytes(), nil
}

// cliError turns a failed CLI run into an error that says what is missing
// and how to fix it.
func cliError(err error, stderr string) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return errors.New(fixInstall)
	case isAuthError(stderr):
		return fmt.Errorf("the Vercel Sandbox CLI is not authenticated (%s): %s", message(stderr), fixLogin)
	case strings.Contains(stderr, "Unknown arguments") || strings.Contains(stderr, "Unknown subcommand") || strings.Contains(stderr, "No value provided for"):
		return fmt.Errorf("%s: this sandbox CLI predates the flags Sparrow uses (create --non-persistent, exec --timeout); update it: npm i -g sandbox@latest", message(stderr))
	case strings.TrimSpace(stderr) != "":
		return fmt.Errorf("%w: %s", err, message(stderr))
	}
	return err
}

// isAuthError recognises the CLI's messages for missing or rejected
// credentials: "Sandbox API request failed due to authentication. Check
// your token or run `sandbox login`." (HTTP 401/403,
// src/util/format-error.ts), "Could not determine team/project scope."
// (src/args/scope.ts) and "Failed to retrieve authentication token."
// (src/args/auth.ts).
func isAuthError(stderr string) bool {
	s := strings.ToLower(stderr)
	for _, k := range []string{"sandbox login", "could not determine team/project scope", "failed to retrieve authentication token", "status code: 401", "status code: 403"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// isTimeout recognises `sandbox exec --timeout` killing the command:
// "Command was killed (SIGKILL, exit code 137)." (src/commands/exec.ts).
func isTimeout(stderr string) bool {
	return strings.Contains(stderr, "Command was killed (SIGKILL")
}

// message is the first line of the CLI's last message: its errors are a
// blank line, a message, then "├▶"/"╰▶" detail lines
// (printTopLevelError in src/util/format-error.ts).
func message(stderr string) string {
	s := strings.TrimSpace(stderr)
	if i := strings.LastIndex(s, "\n\n"); i >= 0 {
		s = strings.TrimSpace(s[i+2:])
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
