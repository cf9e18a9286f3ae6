package daytona

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/remote"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// timeoutGrace is how long the local CLI may outlive a command's timeout:
// the sandbox's own timeout (`daytona exec --timeout`) kills the command
// there first, and the CLI reports it.
const timeoutGrace = 5 * time.Second

// Exec implements sandbox.Sandbox. Each command is staged as a shell
// script and run as
//
//	daytona exec ID --timeout SECONDS -- sh SCRATCH/N/cmd.sh
//
// (`daytona exec [SANDBOX_ID | SANDBOX_NAME] -- [COMMAND] [ARGS...]`,
// apps/cli/cmd/sandbox/exec.go). Every word of that line is a plain token,
// because the CLI joins the command into one string that the sandbox's
// daemon splits again, with quoting rules that changed between versions.
// The script enters the working directory, runs the argv with the request's
// environment and the staged stdin, and prints an exit marker.
func (d *Daytona) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("daytona: exec: empty argv")
	}
	s, ok := d.session(req.SessionID)
	if !ok {
		return sandbox.Exit{}, fmt.Errorf("daytona: exec: no session %q (never prepared, or torn down)", req.SessionID)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("daytona: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: daytona: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if what := req.Limits.ResourceLimit(); what != "" {
		return refuse("this backend cannot enforce a %s limit per command; Daytona sets resources when the sandbox is created", what)
	}
	if req.AllowNetwork && s.blocked {
		return refuse("this sandbox blocks all network access (--network-block-all, because the policy denies network); Daytona cannot open it for one command")
	}
	if reason := d.unavailable(s.cfg); reason != "" {
		return refuse("%s", reason)
	}
	dir, err := remote.Dir(s.cfg.Workdir, req.Workdir)
	if err != nil {
		return refuse("%v", err)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, s.cfg.Workdir), "/")
	if hit := sandbox.DeniedArgument(s.policy.DeniedPaths, rel, req.Argv); hit != "" {
		return refuse("%s is a denied path; the command was not run", hit)
	}
	env, err := d.remoteEnv(req.Env, s.policy.EnvAllowlist)
	if err != nil {
		return refuse("%v", err)
	}
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = s.cfg.timeout
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := d.stage(ctx, s, sio.Stdin)
	if err != nil {
		return refuse("%v", err)
	}
	defer st.remove()
	st.write("cmd.sh", commandScript(dir, env, req.Argv, st.stdinPath(), st.mark, s.synced()))
	st.write("pull.sh", pullScript(s, st))
	if err := d.upload(ctx, s, st); err != nil {
		return refuse("%v", err)
	}
	if err := d.push(ctx, s, st); err != nil {
		return refuse("%v", err)
	}
	exit := d.run(ctx, s, st, sio, timeout, req.Limits.MaxOutputBytes)
	// The command may have changed files: bring them back so checkpoints
	// and rewind see them, even after a failure or a timeout.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
	if perr := d.pull(pctx, s, st); perr != nil {
		fmt.Fprintf(stderr, "sparrow: daytona: %v\n", perr)
		if exit.Code == 0 {
			exit.Code = sandbox.ExitUnsupported
		}
	}
	return exit, nil
}

// run runs the staged command script and turns how the CLI ended into the
// command's exit. `daytona exec` prints the command's output, stdout and
// stderr together, when it has ended; its own exit status is also its
// failure status, so the script's marker is what carries the command's.
func (d *Daytona) run(ctx context.Context, s *session, st *staging, sio sandbox.IO, timeout time.Duration, limit int64) sandbox.Exit {
	stderr := proc.OrDiscard(sio.Stderr)
	tctx, cancel := context.WithTimeout(ctx, timeout+timeoutGrace)
	defer cancel()
	cmd := d.command(tctx, s.cfg.CLI, "exec", s.id, "--timeout", seconds(timeout), "--", "sh", st.remotePath("cmd.sh"))
	if limit <= 0 {
		limit = -1
	}
	out := cliout.NewCap(limit)
	tail := cliout.NewMarkerWriter(out.To(proc.OrDiscard(sio.Stdout)), st.mark)
	var cliErr cliout.Tail
	cmd.Stdout = tail
	cmd.Stderr = io.MultiWriter(out.To(stderr), &cliErr)
	began := time.Now()
	err := d.wait(cmd)
	code, found := tail.Finish()
	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.Truncated()}
	switch {
	case found:
		exit.Code = code
	case ctx.Err() != nil:
		exit.Code, exit.Signal = 128+9, "KILL"
	case tctx.Err() != nil || isTimeout(cliErr.String()):
		exit.Code, exit.TimedOut = 124, true
		fmt.Fprintf(stderr, "sparrow: daytona: timed out after %s\n", timeout)
	case errors.Is(err, exec.ErrNotFound):
		fmt.Fprintf(stderr, "sparrow: daytona: %s\n", fixInstall)
		exit.Code = sandbox.ExitUnsupported
	default:
		fmt.Fprintf(stderr, "sparrow: daytona: %v\n", cliFailure(err, cliErr.String(), s.id))
		exit.Code = sandbox.ExitUnsupported
	}
	return exit
}

// cliFailure explains a `daytona exec` that did not deliver an exit status.
func cliFailure(err error, stderr, id string) error {
	if isAuthError(stderr) {
		return fmt.Errorf("the daytona CLI is not logged in (%s): %s", message(stderr), fixLogin)
	}
	if strings.TrimSpace(stderr) != "" {
		return fmt.Errorf("daytona exec failed (%v): %s; the command's exit status never arrived", err, message(stderr))
	}
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("daytona exec %s ended (%v) without the command's exit status; is the sandbox still started?", id, err)
}

// commandScript is cmd.sh: unless the sentinel synced is missing, it
// enters dir, runs argv through env with the given variables and stdin (a
// staged file, or nothing); it prints mark and the exit status last on
// stdout.
func commandScript(dir string, env, argv []string, stdin, mark, synced string) string {
	q := wsync.Quote
	if stdin == "" {
		stdin = "/dev/null"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "if [ ! -e %s ]; then\n  echo %s\n  s=127\nelif cd %s 2>/dev/null; then\n  env",
		q(synced), q("sparrow: daytona: "+errLost.Error()+"; the command was not run"), q(dir))
	for _, w := range append(append([]string{}, env...), argv...) {
		b.WriteString(" " + q(w))
	}
	fmt.Fprintf(&b, " <%s\n  s=$?\nelse\n  echo %s\n  s=127\nfi\n", q(stdin), q("sparrow: daytona: workdir "+dir+" does not exist in the sandbox"))
	fmt.Fprintf(&b, "printf '\\n%%s%%d\\n' %s \"$s\"\nexit \"$s\"\n", q(mark))
	return b.String()
}

// neverForward are plugin variables that never reach a command,
// allowlisted or not: the CLI's credentials and configuration, and host
// paths meaningless in the sandbox.
var neverForward = func() map[string]bool {
	m := map[string]bool{"TMPDIR": true, "USER": true}
	for _, k := range cliEnv {
		m[k] = true
	}
	return m
}()

// remoteEnv is the command's environment as NAME=VALUE words, sorted:
// allowlisted variables from the plugin's own environment, then the
// request's.
func (d *Daytona) remoteEnv(extra map[string]string, allow []string) ([]string, error) {
	vals := map[string]string{}
	for _, k := range allow {
		if neverForward[k] {
			continue
		}
		if v := d.getenv(k); v != "" {
			vals[k] = v
		}
	}
	return sandbox.MergeEnv(vals, extra)
}

// seconds is d rounded up to whole seconds, at least 1, for --timeout.
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}
