package daytona

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

// killGrace is how long a CLI process gets after SIGTERM.
const killGrace = 2 * time.Second

// command prepares the CLI with args: found on the plugin's own PATH, with
// the plugin's environment (cliEnv), started from "/" because the CLI
// loads a .env file from its working directory (godotenv.Load in
// apps/cli/main.go) and the workspace's .env is a denied path, and in its
// own process group, so that a cancel stops it and what it started.
func (d *Daytona) command(ctx context.Context, cli string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = d.environ()
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		time.AfterFunc(killGrace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return nil
	}
	cmd.WaitDelay = killGrace + time.Second
	if p, err := d.lookPath(cli); err == nil {
		cmd.Path, cmd.Err = p, nil
	} else {
		cmd.Err = fmt.Errorf("%s: %w", cli, exec.ErrNotFound)
	}
	return cmd
}

// wait runs cmd to its end, recording its process group meanwhile so that
// Cleanup can end it when the kernel dies.
func (d *Daytona) wait(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	pgid := cmd.Process.Pid
	d.live.Add(pgid)
	defer d.live.Remove(pgid)
	return cmd.Wait()
}

// call runs one CLI verb to its end with no stdin and returns its stdout.
// A failure says what went wrong and, where it can, how to fix it.
func (d *Daytona) call(ctx context.Context, cfg settings, timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out bytes.Buffer
	var errOut cliout.Tail
	cmd := d.command(ctx, cfg.CLI, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := d.wait(cmd); err != nil {
		if ctx.Err() != nil && !errors.Is(err, exec.ErrNotFound) {
			return out.Bytes(), fmt.Errorf("daytona %s: no answer within %s", args[0], timeout)
		}
		return out.Bytes(), fmt.Errorf("daytona %s: %w", args[0], cliError(err, errOut.String()))
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
		return fmt.Errorf("the daytona CLI is not logged in (%s): %s", message(stderr), fixLogin)
	case strings.Contains(stderr, "unknown command") || strings.Contains(stderr, "unknown flag"):
		return fmt.Errorf("%s: this daytona CLI predates the verbs Sparrow uses (create --name, info --format, exec --timeout, cp); update it: brew upgrade daytonaio/cli/daytona", message(stderr))
	case strings.TrimSpace(stderr) != "":
		return fmt.Errorf("%w: %s", err, message(stderr))
	}
	return err
}

// isAuthError recognises the CLI's messages for missing or rejected
// credentials: "no profiles found. Run `daytona login` to authenticate",
// "no active profile found. Run `daytona login` ..." (apps/cli/config) and
// "... - run 'daytona login' to reauthenticate" on HTTP 401
// (apps/cli/apiclient/error_handler.go).
func isAuthError(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "daytona login") || strings.Contains(s, "unauthorized")
}

// isTimeout recognises the toolbox's answer to a command that outlived
// `daytona exec --timeout`: "command execution timeout" (HTTP 408) in
// older daemons, "Command execution timed out after N seconds" in newer.
func isTimeout(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "execution timeout") || strings.Contains(s, "execution timed out")
}

// logrusMsg is the message of a logrus line in its non-terminal format,
// `time="..." level=fatal msg="..."`, which the CLI's log.Fatal prints.
var logrusMsg = regexp.MustCompile(`msg="((?:[^"\\]|\\.)*)"`)

// message is the CLI's last stderr line, without logrus decoration.
func message(stderr string) string {
	line := strings.TrimSpace(stderr)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[i+1:])
	}
	if m := logrusMsg.FindStringSubmatch(line); m != nil {
		if s, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
			return s
		}
		return m[1]
	}
	return line
}
