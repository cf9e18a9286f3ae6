package singularity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

// passEnv are the plugin's own variables a command may get, and only when
// the policy allowlists them. Host PATH, HOME, TMPDIR and USER mean
// nothing in the container; the tool variables are Apptainer's own.
var passEnv = []string{"LANG", "TERM"}

// shellName is what --env-file can set: the file is read by Apptainer's
// embedded shell interpreter.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Exec implements sandbox.Sandbox. The argv runs as (see execPlan.argv)
//
//	BINARY --quiet exec --containall --cleanenv --no-eval --no-mount bind-paths
//	  [--net --network none] --bind WS:WORKDIR [--bind SRC:DST[:ro]]...
//	  [--bind MASK:DENIED:ro]... --pwd DIR [--env-file FILE]
//	  [--memory N --memory-swap N] [--pids-limit N] IMAGE ARGV...
//
// Protocol problems (empty argv, an unknown session, a context already
// done) are Go errors. Requests this backend cannot honour, a working
// directory outside the workspace and a command naming a denied path exit
// 127 with the reason on stderr; so do a command not found in the image
// and an apptainer failure (its FATAL line is on stderr). Everything else
// is the command's own exit, which apptainer propagates.
func (b *Singularity) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("singularity: exec: empty argv")
	}
	s, ok := b.session(req.SessionID)
	if !ok {
		return sandbox.Exit{}, fmt.Errorf("singularity: exec: no session %q (never prepared, or torn down)", req.SessionID)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("singularity: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: singularity: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if _, err := exec.LookPath(s.binary); err != nil {
		if _, berr := b.binary(s.cfg); berr != nil {
			return refuse("%v", berr)
		}
		return refuse("%s is gone since the session was prepared: install Apptainer (%s)", s.binary, installDocs)
	}
	limits, why := b.limitFlags(req.Limits)
	if why != "" {
		return refuse("%s", why)
	}
	if req.AllowNetwork && !s.policy.AllowNetwork {
		return refuse("the policy denies network access and this command asked for it; it was not run")
	}
	host, inside, err := s.workdir(req.Workdir)
	if err != nil {
		return refuse("%v", err)
	}
	rel, _ := filepath.Rel(s.root, host)
	if hit := sandbox.DeniedArgument(s.policy.DeniedPaths, rel, req.Argv); hit != "" {
		return refuse("%s is a denied path; the command was not run", hit)
	}
	env, err := b.commandEnv(req.Env, s.policy.EnvAllowlist)
	if err != nil {
		return refuse("%v", err)
	}
	masks, err := s.masks()
	if err != nil {
		return refuse("%v", err)
	}
	envFile, err := s.writeEnvFile(env)
	if err != nil {
		return refuse("%v", err)
	}
	if envFile != "" {
		defer os.Remove(envFile)
	}
	plan := execPlan{image: s.image, root: s.root, workdir: s.cfg.Workdir, pwd: inside, envFile: envFile,
		binds: s.binds, masks: masks, network: req.AllowNetwork && s.policy.AllowNetwork, limits: limits}
	timeout, limit := req.Limits.Timeout, req.Limits.MaxOutputBytes
	if timeout <= 0 {
		timeout = s.cfg.timeout
	}
	if limit <= 0 {
		limit = s.cfg.MaxOutputBytes
	}
	cmd := &exec.Cmd{Path: s.binary, Args: append([]string{s.binary}, plan.argv(req.Argv)...),
		Env: b.environ(), SysProcAttr: proc.Attr()}
	// Apptainer's starter relays signals to the container process.
	var tail cliout.Tail
	exit, err := proc.Run(ctx, cmd, sio, proc.Options{Backend: "singularity", Timeout: timeout, Limit: limit,
		Tap: &tail, Live: &b.live, Relay: true, StartFailure: sandbox.ExitUnsupported})
	if err != nil {
		return exit, err
	}
	if exit.Code == 255 && !exit.TimedOut {
		if line := fatalLine(tail.String()); line != "" {
			exit.Code = sandbox.ExitUnsupported
			if strings.Contains(line, "executable file not found") {
				fmt.Fprintf(stderr, "sparrow: singularity: command not found in the image: %s\n", req.Argv[0])
			} else {
				fmt.Fprintf(stderr, "sparrow: singularity: %s failed before the command ran: %s\n", filepath.Base(s.binary), line)
			}
		}
	}
	return exit, nil
}

// execPlan is everything one `apptainer exec` is made of.
type execPlan struct {
	image, root, workdir, pwd, envFile string
	binds, masks                       []bind
	network                            bool
	limits                             []string
}

// argv is the CLI's arguments for cmd, as Apptainer documents them
// (apptainer exec --help; cmd/internal/cli/action_flags.go):
//
//   - --quiet (global) drops INFO lines, keeps warnings and errors;
//   - --containall: a fresh PID and IPC namespace, an empty /tmp and
//     $HOME, a minimal /dev, and --cleanenv (the host environment stays
//     out; Apptainer still passes TERM and proxy variables from its own
//     environment, which the plugin never gives it);
//   - --cleanenv, spelled out so the intent is visible;
//   - --no-eval: variable values are injected single-quoted, never
//     evaluated by a shell in the container;
//   - --no-mount bind-paths: the administrator's `bind path` entries in
//     apptainer.conf are not mounted, so no host directory appears that
//     the policy did not name;
//   - --net --network none: a network namespace with only loopback, the
//     one network Apptainer lets every user request;
//   - --bind: the workspace read-write, the policy's other paths, then
//     the masks over denied paths (later binds cover earlier ones);
//   - --pwd: where the command starts;
//   - --env-file: the command's variables, kept off the process list;
//   - cgroup limits (limitFlags).
func (p execPlan) argv(cmd []string) []string {
	a := []string{"--quiet", "exec", "--containall", "--cleanenv", "--no-eval", "--no-mount", "bind-paths"}
	if !p.network {
		a = append(a, "--net", "--network", "none")
	}
	a = append(a, "--bind", bind{src: p.root, dst: p.workdir}.spec())
	for _, b := range append(slices.Clip(p.binds), p.masks...) {
		a = append(a, "--bind", b.spec())
	}
	a = append(a, "--pwd", p.pwd)
	if p.envFile != "" {
		a = append(a, "--env-file", p.envFile)
	}
	a = append(a, p.limits...)
	a = append(a, p.image)
	return append(a, cmd...)
}

// commandEnv is what the command gets, sorted NAME=VALUE: the passEnv
// variables the plugin has and the policy allowlists, overlaid with the
// request's own. Nothing else of the host's environment goes in.
func (b *Singularity) commandEnv(extra map[string]string, allow []string) ([]string, error) {
	vals := map[string]string{}
	for _, k := range passEnv {
		if !slices.Contains(allow, k) {
			continue
		}
		if v := b.getenv(k); v != "" {
			vals[k] = v
		}
	}
	env, err := sandbox.MergeEnv(vals, extra)
	if err != nil {
		return nil, err
	}
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !shellName.MatchString(name) {
			return nil, fmt.Errorf("environment variable %q cannot be passed into the container: Apptainer's --env-file takes shell names (letters, digits and _)", name)
		}
	}
	return env, nil
}

// writeEnvFile writes env as NAME='VALUE' lines to a file only this user
// can read, in the session's scratch directory, and returns its path; ""
// when env is empty. Single quotes keep every value literal for the shell
// interpreter that reads the file.
func (s *session) writeEnvFile(env []string) (string, error) {
	if len(env) == 0 {
		return "", nil
	}
	var b strings.Builder
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		b.WriteString(name + "=" + shellQuote(value) + "\n")
	}
	n := make([]byte, 8)
	_, _ = rand.Read(n)
	f := filepath.Join(s.dir, "env-"+hex.EncodeToString(n))
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("write the env file: %w", err)
	}
	return f, nil
}

// shellQuote quotes v for a POSIX shell.
func shellQuote(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }

// fatalLine is the last line of stderr when it is Apptainer's own fatal
// error ("FATAL:   ..."), the sign that it exited 255 without running the
// command to completion; "" otherwise.
func fatalLine(stderr string) string {
	if line := lastLine(stderr); strings.HasPrefix(line, "FATAL:") {
		return line
	}
	return ""
}
