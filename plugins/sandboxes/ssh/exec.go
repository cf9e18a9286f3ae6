package ssh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/remote"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// syncTimeout bounds copying the workspace back after a command.
const syncTimeout = 10 * time.Minute

// remoteEnv are the variables a command may keep from the remote login's
// own environment (the kernel's base set): facts of the remote host, not
// of this one. Nothing from the plugin's environment reaches a command.
func remoteEnv() []string { return []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"} }

// Exec implements sandbox.Sandbox. The command runs as
//
//	ssh OPTIONS -- HOST 'exec sh -c WRAPPER sparrow CTL/TAG WS DIR NAME=VALUE... ARGV...'
//
// after the workspace was pushed, and the workspace is pulled back after
// it, whatever its outcome. Protocol problems (empty argv, an unknown
// session, a context already done) are Go errors. A request this backend
// cannot honour, a workdir outside the workspace copy, a command naming a
// denied path, and a connection that fails (ssh's own exit 255, an
// untrusted host key) exit 127 with the reason on stderr; the command's
// own exit status, 255 included, propagates as it is.
func (b *SSH) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("ssh: exec: empty argv")
	}
	s, ok := b.session(req.SessionID)
	if !ok {
		return sandbox.Exit{}, fmt.Errorf("ssh: exec: no session %q (never prepared, or torn down)", req.SessionID)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("ssh: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: ssh: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if what := req.Limits.ResourceLimit(); what != "" {
		return refuse("this backend cannot enforce a %s limit on the remote command (ulimit would bound each process, not the command); use docker or local-hardened", what)
	}
	if reason := b.unavailable(s.cfg); reason != "" {
		return refuse("%s", reason)
	}
	dir, err := remote.Dir(s.ws, req.Workdir)
	if err != nil {
		return refuse("%v", err)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, s.ws), "/")
	if hit := sandbox.DeniedArgument(s.policy.DeniedPaths, rel, req.Argv); hit != "" {
		return refuse("%s is a denied path; the command was not run", hit)
	}
	env, err := sandbox.MergeEnv(nil, req.Env)
	if err != nil {
		return refuse("%v", err)
	}
	timeout, limit := req.Limits.Timeout, req.Limits.MaxOutputBytes
	if timeout <= 0 {
		timeout = s.cfg.timeout
	}
	if limit <= 0 {
		limit = s.cfg.MaxOutputBytes
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := b.openMaster(ctx, s); err != nil {
		return refuse("%v; the command was not run", err)
	}
	if err := b.push(ctx, s); err != nil {
		return refuse("%v; the command was not run", err)
	}
	tag := nonce()
	args := append([]string{s.ctl + "/" + tag, s.ws, dir}, env...)
	remote := shell(wrapper(baseEnv(s.policy.EnvAllowlist)), append(args, req.Argv...)...)
	exit := b.run(ctx, s, tag, remote, sio, timeout, limit)

	// The command may have changed files: bring them back so checkpoints
	// and rewind see them, even after a failure or a timeout.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
	if err := b.pull(pctx, s, tag); err != nil {
		fmt.Fprintf(stderr, "sparrow: ssh: %v\n", err)
		if exit.Code == 0 {
			exit.Code = sandbox.ExitUnsupported
		}
	}
	return exit, nil
}

// baseEnv are the remote login's variables a command keeps: remoteEnv,
// narrowed to the policy's allowlist when it has one.
func baseEnv(allow []string) []string {
	var names []string
	for _, k := range remoteEnv() {
		if len(allow) == 0 || slices.Contains(allow, k) {
			names = append(names, k)
		}
	}
	return names
}

// wrapper is the remote side of a command, run by sh as
//
//	sh -c WRAPPER sparrow CTL/TAG WS DIR NAME=VALUE... ARGV...
//
// It must lead its own process group (OpenSSH's sshd starts each session
// in a new one, and the login shell execs sh), so that killing the group
// stops the command and all it started. It records its pid in TAG.pid
// before anything runs, and gives up at once when TAG.stop says the
// command was stopped before it started. It enters DIR, which must lie in
// the workspace copy WS once symlinks are resolved, and runs ARGV with an
// empty environment plus the remote login's keep variables and the
// request's NAME=VALUE pairs. Its traps keep it alive through the
// signals sent to the group (the command itself gets them with their
// default action), so it can write the command's status to TAG.status:
// ssh exits 255 both when it fails and when the command does, and the
// file tells them apart. Then it stops what the command left behind in
// its group.
func wrapper(keep []string) string {
	var vars strings.Builder
	for _, k := range keep {
		fmt.Fprintf(&vars, `${%s+"%s=$%s"} `, k, k, k)
	}
	return `p=$1 w=$2 d=$3; shift 3
trap : INT TERM HUP QUIT USR1 USR2
if ! kill -s 0 -- -$$ 2>/dev/null; then
  echo "sparrow: ssh: the remote shell does not lead its own process group (is the server OpenSSH?), so the command could not be stopped; it was not run" >&2
  exit 127
fi
if ! echo $$ > "$p.pid"; then echo "sparrow: ssh: cannot write to the session directory; the command was not run" >&2; exit 127; fi
if [ -e "$p.stop" ]; then echo 143 > "$p.status"; exit 143; fi
if ! cd -P -- "$d" 2>/dev/null; then
  echo "sparrow: ssh: workdir $d does not exist on the remote host" >&2; echo 127 > "$p.status"; exit 127
fi
case "$(pwd -P)/" in
"$w"/*) ;;
*) echo "sparrow: ssh: workdir $d leads out of the workspace copy $w" >&2; echo 127 > "$p.status"; exit 127 ;;
esac
env -i ` + vars.String() + `"$@"
s=$?
echo $s > "$p.status"
kill -s TERM -- -$$ 2>/dev/null
exit $s`
}
