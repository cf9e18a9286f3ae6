package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// wrapper runs in the container as `sh -c wrapper sparrow MARK ARGV...`.
// It reports its pid on stderr behind MARK, which the plugin strips, and
// execs ARGV, so the exit status and the signals are the command's own.
// runc makes every process it starts a session leader
// (libcontainer/nsenter/nsexec.c calls setsid() in the last stage), so
// the pid also names the command's process group: that is how a timeout,
// a cancel or a forwarded signal reaches the command and what it started,
// which killing the local docker CLI would not.
const wrapper = `m=$1; shift; printf '%s%d\n' "$m" "$$" >&2; ` +
	`command -v "$1" >/dev/null 2>&1 || { printf 'sparrow: docker: command not found: %s\n' "$1" >&2; exit 127; }; ` +
	`exec "$@"`

// forwardEnv are the plugin's variables a command may get, when the
// policy allowlists them. PATH, HOME, TMPDIR and USER are the host's and
// mean nothing in the container, which keeps its own; the docker CLI's
// variables configure the CLI only.
var forwardEnv = []string{"LANG", "TERM"}

// Exec implements sandbox.Sandbox. The argv runs as
//
//	docker exec [-i] -w DIR [-e NAME=VALUE]... CONTAINER sh -c WRAPPER sparrow MARK ARGV...
//
// Protocol problems (empty argv, an unknown session, a context already
// done) are Go errors. A request this backend cannot honour, a working
// directory outside the workspace, a command naming a denied path, a
// stopped container, a missing CLI or engine: exit 127 with the reason on
// stderr. A command not found exits 127, one not executable 126. Anything
// else is the command's own exit.
func (d *Docker) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("docker: exec: empty argv")
	}
	s, ok := d.session(req.SessionID)
	if !ok {
		return sandbox.Exit{}, fmt.Errorf("docker: exec: no session %q (never prepared, or torn down)", req.SessionID)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("docker: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: docker: "+format+"\n", args...)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
	}
	if why := s.limitRefusal(req.Limits); why != "" {
		return refuse("%s", why)
	}
	if req.AllowNetwork && !s.policy.AllowNetwork {
		return refuse("the container was started with --network none because the policy denies network; docker cannot open the network for one command")
	}
	if why := s.stopped(); why != "" {
		return refuse("%s", why)
	}
	dir, rel, err := s.dir(req.Workdir)
	if err != nil {
		return refuse("%v", err)
	}
	if hit := sandbox.DeniedArgument(s.policy.DeniedPaths, rel, req.Argv); hit != "" {
		return refuse("%s is a denied path; the command was not run", hit)
	}
	env, err := d.commandEnv(req.Env, s.policy.EnvAllowlist)
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
	mark := "sparrow-pid-" + nonce() + "="
	argv := []string{"exec"}
	if sio.Stdin != nil {
		argv = append(argv, "-i")
	}
	argv = append(argv, "-w", dir)
	for _, kv := range env {
		argv = append(argv, "-e", kv) // always NAME=VALUE: a bare -e NAME would read the CLI's environment
	}
	argv = append(argv, s.name, "sh", "-c", wrapper, "sparrow", mark)
	return d.run(ctx, s, append(argv, req.Argv...), mark, sio, timeout, limit)
}

// limitRefusal says why a command's resource limits cannot be honoured, or
// "". docker exec sets no limits of its own: a memory or process limit is
// honoured only when the container's is at least as strict. CPU time and
// disk cannot be bounded here (`cpus` limits a rate, not a total).
func (s *session) limitRefusal(l sandbox.Limits) string {
	const block = "in the sandbox \"docker\" block"
	if l.MemoryBytes > 0 {
		switch {
		case s.cfg.memory == 0:
			return fmt.Sprintf("a memory limit of %d bytes was asked for, and docker exec cannot set one per command; the container has none: set `memory` %s", l.MemoryBytes, block)
		case s.cfg.memory > l.MemoryBytes:
			return fmt.Sprintf("a memory limit of %d bytes was asked for, and docker exec cannot set one per command; the container's (`memory` = %q) is looser", l.MemoryBytes, s.cfg.Memory)
		}
	}
	if l.MaxPids > 0 {
		switch {
		case s.cfg.PidsLimit == 0:
			return fmt.Sprintf("a limit of %d processes was asked for, and docker exec cannot set one per command; the container has none: set `pids_limit` %s", l.MaxPids, block)
		case s.cfg.PidsLimit > l.MaxPids:
			return fmt.Sprintf("a limit of %d processes was asked for, and docker exec cannot set one per command; the container's (`pids_limit` = %d) is looser", l.MaxPids, s.cfg.PidsLimit)
		}
	}
	if l.CPUTime > 0 {
		return "this backend cannot enforce a CPU time limit: docker exec sets none, and `cpus` limits the rate, not the total"
	}
	if l.DiskBytes > 0 {
		return "this backend cannot enforce a disk limit"
	}
	return ""
}

// dir maps a request's workdir into the container: empty is the
// workdir, relative is below it, absolute must be inside it. The
// directory must exist in the workspace, and neither it nor what its
// symlinks lead to may leave the workspace. rel is its path below the
// workspace, for the denied-path check. The error text is for stderr.
func (s *session) dir(dir string) (container, rel string, err error) {
	root, orig := s.cfg.Workdir, dir
	switch {
	case dir == "":
		dir = root
	case !path.IsAbs(dir):
		dir = path.Join(root, dir)
	}
	dir = path.Clean(dir)
	if dir != root && !strings.HasPrefix(dir, root+"/") {
		return "", "", fmt.Errorf("workdir %q is outside the workspace %s", orig, root)
	}
	rel = "."
	if dir != root {
		rel = strings.TrimPrefix(dir, root+"/")
	}
	host := filepath.Join(s.realRoot, filepath.FromSlash(rel))
	resolved, err := filepath.EvalSymlinks(host)
	if err != nil {
		return "", "", fmt.Errorf("workdir %q does not exist", orig)
	}
	if !within(s.realRoot, resolved) {
		return "", "", fmt.Errorf("workdir %q leads to %s, outside the workspace", orig, resolved)
	}
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("workdir %q is not a directory", orig)
	}
	return dir, rel, nil
}

// commandEnv is a command's `-e` list, sorted: LANG and TERM from the
// plugin's own environment when the policy allowlists them, overlaid
// with the request's variables.
func (d *Docker) commandEnv(extra map[string]string, allow []string) ([]string, error) {
	vals := map[string]string{}
	for _, k := range forwardEnv {
		if !slices.Contains(allow, k) {
			continue
		}
		if v := d.getenv(k); v != "" {
			vals[k] = v
		}
	}
	return sandbox.MergeEnv(vals, extra)
}

func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
