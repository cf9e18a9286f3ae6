package vercel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/remote"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

// wrapper runs in the sandbox as `sh -c wrapper sparrow DIR STDIN MARK
// SYNCED ARGV...`: unless the sentinel SYNCED is missing, it enters DIR,
// feeds STDIN (a staged file, removed after; "-" for none, as an empty
// word might not survive the CLI's argument parser); it prints MARK
// and the exit status last on stdout. The status travels in the output
// because the CLI exits 1 when it fails itself, so its own exit status
// cannot tell the command's 1 from a lost connection.
const wrapper = `d=$1; i=$2; m=$3; k=$4; shift 4; ` +
	`if [ ! -e "$k" ]; then echo "sparrow: vercel-sandbox: the sandbox no longer holds its copy of the workspace; the command was not run" >&2; s=127; ` +
	`elif cd "$d" 2>/dev/null; then if [ "$i" != - ]; then "$@" <"$i"; s=$?; rm -f "$i"; else "$@" </dev/null; s=$?; fi; ` +
	`else echo "sparrow: vercel-sandbox: workdir $d does not exist in the sandbox" >&2; s=127; fi; ` +
	`printf '\n%s%d\n' "$m" "$s"`

// timeoutGrace is how long the local CLI may outlive a command's timeout:
// the sandbox's own timeout (`sandbox exec --timeout`) kills the command
// there first, and the CLI reports it.
const timeoutGrace = 5 * time.Second

// Exec implements sandbox.Sandbox. The argv runs as
//
//	sandbox exec [--scope T] [--project P] --timeout Ns [--env NAME=VALUE]... NAME -- sh -c WRAPPER sparrow DIR STDIN MARK SYNCED ARGV...
//
// (`sandbox exec [flags] NAME -- COMMAND [ARGS...]`,
// vercel.com/docs/sandbox/cli-reference and src/commands/exec.ts), which
// streams the command's stdout and stderr separately.
func (v *Vercel) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("vercel-sandbox: exec: empty argv")
	}
	s, ok := v.session(req.SessionID)
	if !ok {
		return sandbox.Exit{}, fmt.Errorf("vercel-sandbox: exec: no session %q (never prepared, or torn down)", req.SessionID)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("vercel-sandbox: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: vercel-sandbox: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if what := req.Limits.ResourceLimit(); what != "" {
		return refuse("this backend cannot enforce a %s limit per command; Vercel sets resources when the sandbox is created", what)
	}
	if req.AllowNetwork && s.blocked {
		return refuse("this sandbox was created with --network-policy deny-all because the policy denies network; Sparrow does not open it for one command")
	}
	if reason := v.unavailable(s.cfg); reason != "" {
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
	env, err := v.remoteEnv(req.Env, s.policy.EnvAllowlist)
	if err != nil {
		return refuse("%v", err)
	}
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = s.cfg.timeout
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	local, err := os.MkdirTemp("", "sparrow-vercel-")
	if err != nil {
		return refuse("stage the command: %v", err)
	}
	defer os.RemoveAll(local)
	if err := v.push(ctx, s, local, stderr); err != nil {
		return refuse("%v", err)
	}
	stdin, err := v.stageStdin(ctx, s, local, sio.Stdin)
	if err != nil {
		return refuse("%v", err)
	}
	args := append(append([]string{"exec"}, v.scopeArgs(s.cfg)...), "--timeout", seconds(timeout))
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	mark := "__sparrow_exit_" + v.nonce() + "="
	remote := append([]string{"sh", "-c", wrapper, "sparrow", dir, stdin, mark, s.synced()}, req.Argv...)
	args = append(append(args, s.name, "--"), remote...)
	exit := v.run(ctx, s, args, remote, mark, sio, timeout, req.Limits.MaxOutputBytes)
	// The command may have changed files: bring them back so checkpoints
	// and rewind see them, even after a failure or a timeout.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
	if perr := v.pull(pctx, s, local); perr != nil {
		fmt.Fprintf(stderr, "sparrow: vercel-sandbox: %v\n", perr)
		if exit.Code == 0 {
			exit.Code = sandbox.ExitUnsupported
		}
	}
	return exit, nil
}

// run starts the CLI and turns how it ended into the command's exit. The
// CLI echoes the remote command line to stderr first
// (`$ COMMAND ARGS...`, src/util/print-command.ts); that line is dropped.
func (v *Vercel) run(ctx context.Context, s *session, args, remote []string, mark string, sio sandbox.IO, timeout time.Duration, limit int64) sandbox.Exit {
	stderr := proc.OrDiscard(sio.Stderr)
	lctx, lcancel := context.WithCancelCause(ctx)
	defer lcancel(nil)
	tctx, cancel := context.WithTimeout(lctx, timeout+timeoutGrace)
	defer cancel()
	cmd := v.command(tctx, s.cfg.CLI, s.root, args...)
	if limit <= 0 {
		limit = -1
	}
	out := cliout.NewCap(limit)
	tail := cliout.NewMarkerWriter(out.To(proc.OrDiscard(sio.Stdout)), mark)
	var cliErr cliout.Tail
	echo := &echoFilter{echo: []byte("$ " + strings.Join(remote, " ") + "\n"),
		dst: io.MultiWriter(out.To(stderr), &cliErr, &loginWatch{hit: func() { lcancel(errLoginPrompt) }})}
	cmd.Stdout = tail
	cmd.Stderr = echo
	began := time.Now()
	err := v.wait(cmd)
	echo.finish()
	code, found := tail.Finish()
	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.Truncated()}
	switch {
	case found:
		exit.Code = code
	case errors.Is(context.Cause(lctx), errLoginPrompt):
		fmt.Fprintf(stderr, "sparrow: vercel-sandbox: the CLI asked for an interactive login (%s): %s\n", message(cliErr.String()), fixLogin)
		exit.Code = sandbox.ExitUnsupported
	case ctx.Err() != nil:
		exit.Code, exit.Signal = 128+9, "KILL"
	case tctx.Err() != nil || isTimeout(cliErr.String()):
		exit.Code, exit.TimedOut = 124, true
		fmt.Fprintf(stderr, "sparrow: vercel-sandbox: timed out after %s\n", timeout)
	case errors.Is(err, exec.ErrNotFound):
		fmt.Fprintf(stderr, "sparrow: vercel-sandbox: %s\n", fixInstall)
		exit.Code = sandbox.ExitUnsupported
	default:
		fmt.Fprintf(stderr, "sparrow: vercel-sandbox: %v\n", cliFailure(err, cliErr.String(), s.name))
		exit.Code = sandbox.ExitUnsupported
	}
	return exit
}

// cliFailure explains a `sandbox exec` that did not deliver an exit
// status.
func cliFailure(err error, stderr, name string) error {
	if isAuthError(stderr) {
		return fmt.Errorf("the Vercel Sandbox CLI is not authenticated (%s): %s", message(stderr), fixLogin)
	}
	if strings.TrimSpace(stderr) != "" {
		return fmt.Errorf("sandbox exec failed (%v): %s; the command's exit status never arrived", err, message(stderr))
	}
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("sandbox exec %s ended (%v) without the command's exit status; is the sandbox still running (its lifetime is `timeout`)?", name, err)
}

// neverForward are plugin variables that never reach a command,
// allowlisted or not: the CLI's credentials and scope, and host paths
// meaningless in the sandbox.
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
func (v *Vercel) remoteEnv(extra map[string]string, allow []string) ([]string, error) {
	vals := map[string]string{}
	for _, k := range allow {
		if neverForward[k] {
			continue
		}
		if val := v.getenv(k); val != "" {
			vals[k] = val
		}
	}
	return sandbox.MergeEnv(vals, extra)
}

// seconds is d rounded up to whole seconds, at least 1, as a duration the
// CLI parses ("30s").
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10) + "s"
}
