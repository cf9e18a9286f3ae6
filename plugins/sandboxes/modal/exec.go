package modal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/remote"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

// wrapper runs in the container as `sh -c wrapper sparrow DIR STDIN MARK
// env NAME=VALUE... ARGV...`: it enters DIR, feeds STDIN (a staged file)
// or nothing, and prints MARK and the exit status last on stdout. The
// status travels in the output because `modal container exec` does not
// propagate it (modal/cli/container.py: the non-PTY path awaits
// ContainerProcess.wait() and discards its result), and a CLI failure must
// never be mistaken for the command's own exit.
const wrapper = `d=$1; i=$2; m=$3; shift 3; ` +
	`if cd "$d" 2>/dev/null; then if [ -n "$i" ]; then "$@" <"$i"; s=$?; rm -f "$i"; else "$@" </dev/null; s=$?; fi; ` +
	`else echo "sparrow: modal: workdir $d does not exist in the container"; s=127; fi; ` +
	`printf '\n%s%d\n' "$m" "$s"`

// syncTimeout bounds copying the workspace back after a command.
const syncTimeout = 10 * time.Minute

// killGrace is how long the modal process gets after SIGTERM.
const killGrace = 2 * time.Second

// Exec implements sandbox.Sandbox. The argv runs as
//
//	modal container exec --no-pty ID -- sh -c WRAPPER sparrow DIR STDIN MARK env NAME=VALUE... ARGV...
//
// (`modal container exec [--pty|--no-pty] CONTAINER_ID -- COMMAND...`,
// modal.com/docs/reference/cli/container and modal/cli/container.py).
// Modal's CLI writes the command's stderr to its stdout in this mode, so
// the caller's Stderr gets the CLI's own messages and Sparrow's only.
func (m *Modal) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("modal: exec: empty argv")
	}
	s, ok := m.session(req.SessionID)
	if !ok {
		return sandbox.Exit{}, fmt.Errorf("modal: exec: no session %q (never prepared, or torn down)", req.SessionID)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("modal: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: modal: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if what := req.Limits.ResourceLimit(); what != "" {
		return refuse("this backend cannot enforce a %s limit per command; Modal sets resources when the sandbox is created", what)
	}
	if req.AllowNetwork && s.created && !s.policy.AllowNetwork {
		return refuse("this sandbox was created with block_network because the policy denies network; Modal cannot open it for one command")
	}
	if reason := m.unavailable(s.cfg); reason != "" {
		return refuse("%s", reason)
	}
	dir, err := remote.Dir(s.cfg.Workdir, req.Workdir)
	if err != nil {
		return refuse("%v", err)
	}
	env, err := m.remoteEnv(req.Env, s.policy.EnvAllowlist)
	if err != nil {
		return refuse("%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := m.push(ctx, s); err != nil {
		return refuse("%v", err)
	}
	stdinFile, err := m.stageStdin(ctx, s, sio.Stdin)
	if err != nil {
		return refuse("%v", err)
	}
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = s.cfg.timeout
	}
	mark := "__sparrow_exit_" + nonce() + "="
	argv := []string{"container", "exec", "--no-pty", s.container, "--", "sh", "-c", wrapper, "sparrow", dir, stdinFile, mark, "env"}
	argv = append(append(argv, env...), req.Argv...)
	exit, err := m.run(ctx, s, argv, mark, sio, timeout, req.Limits.MaxOutputBytes)
	if err != nil {
		return exit, err
	}
	// The command may have changed files: bring them back so checkpoints
	// and rewind see them, even after a failure or a timeout.
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer dcancel()
	if derr := m.pull(dctx, s); derr != nil {
		fmt.Fprintf(stderr, "sparrow: modal: %v\n", derr)
		if exit.Code == 0 {
			exit.Code = sandbox.ExitUnsupported
		}
	}
	return exit, nil
}

// run starts the modal CLI and turns how it ended into the command's exit.
func (m *Modal) run(ctx context.Context, s *session, argv []string, mark string, sio sandbox.IO, timeout time.Duration, limit int64) (sandbox.Exit, error) {
	stderr := proc.OrDiscard(sio.Stderr)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := m.command(tctx, s.cfg.Modal, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		time.AfterFunc(killGrace, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		return nil
	}
	cmd.WaitDelay = killGrace + time.Second
	if limit <= 0 {
		limit = -1
	}
	out := cliout.NewCap(limit)
	tail := cliout.NewMarkerWriter(out.To(proc.OrDiscard(sio.Stdout)), mark)
	var cliErr cliout.Tail
	cmd.Stdout = tail
	cmd.Stderr = io.MultiWriter(out.To(stderr), &cliErr)
	began := time.Now()
	err := cmd.Run()
	code, found := tail.Finish()
	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.Truncated()}
	switch {
	case tctx.Err() != nil && ctx.Err() == nil:
		exit.Code, exit.TimedOut = 124, true
		fmt.Fprintf(stderr, "sparrow: modal: timed out after %s; the local modal process was stopped, the command may still run in the container until it ends\n", timeout)
	case ctx.Err() != nil:
		exit.Code, exit.Signal = 128+int(syscall.SIGKILL), "KILL"
	case found:
		exit.Code = code
	case errors.Is(err, exec.ErrNotFound):
		fmt.Fprintf(stderr, "sparrow: modal: %s\n", fixInstall)
		exit.Code = sandbox.ExitUnsupported
	default:
		// The CLI ended without the command's status: it failed itself.
		fmt.Fprintf(stderr, "sparrow: modal: %v\n", cliFailure(err, cliErr.String(), s.container))
		exit.Code = sandbox.ExitUnsupported
	}
	return exit, nil
}

// cliFailure explains a modal CLI run that did not deliver an exit status.
func cliFailure(err error, stderr, container string) error {
	if isAuthError(stderr) {
		return fmt.Errorf("modal is not authenticated (%s): run modal token new, or set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET", lastLine(stderr))
	}
	if strings.TrimSpace(stderr) != "" {
		return fmt.Errorf("modal container exec failed (%v): %s; the command's exit status never arrived", err, lastLine(stderr))
	}
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("modal container exec %s ended (%v) without the command's exit status; is the container still running?", container, err)
}

// neverForward are plugin variables that never reach a remote command,
// allowlisted or not: credentials, and host paths meaningless there.
var neverForward = map[string]bool{"MODAL_TOKEN_ID": true, "MODAL_TOKEN_SECRET": true, "PATH": true, "HOME": true}

// remoteEnv is the `env` argv for the command, sorted: allowlisted
// variables from the plugin's own environment, then the request's.
func (m *Modal) remoteEnv(extra map[string]string, allow []string) ([]string, error) {
	vals := map[string]string{}
	for _, k := range allow {
		if neverForward[k] {
			continue
		}
		if v := m.getenv(k); v != "" {
			vals[k] = v
		}
	}
	return sandbox.MergeEnv(vals, extra)
}

// stageStdin reads the caller's stdin to its end and, when there is any,
// copies it into the container, returning the file the command reads.
// Modal's non-PTY exec forwards no stdin, so input cannot be interactive.
func (m *Modal) stageStdin(ctx context.Context, s *session, r io.Reader) (string, error) {
	if r == nil {
		return "", nil
	}
	data, err := readAll(ctx, r)
	if err != nil || len(data) == 0 {
		return "", err
	}
	name := "/tmp/.sparrow-stdin-" + nonce()
	var errOut bytes.Buffer
	if err := m.python(ctx, s.cfg, bytes.NewReader(data), io.Discard, &errOut, "put", s.sandboxID, "cat > "+name); err != nil {
		return "", fmt.Errorf("copy stdin into the container: %w", toolError(err, errOut.String(), s.cfg.Python))
	}
	return name, nil
}

// readAll reads r to its end unless ctx ends first.
func readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	c := make(chan result, 1)
	go func() { b, err := io.ReadAll(r); c <- result{b, err} }()
	select {
	case res := <-c:
		return res.b, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("read stdin: %w", ctx.Err())
	}
}

func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
