package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Exec implements sandbox.Sandbox. Protocol problems (empty argv, an
// unknown session, a context already done) are Go errors. Requests this
// backend cannot honour, a working directory outside the workspace and a
// command that names a denied path exit 127 with the reason on stderr; a
// command that is not found exits 127 and one that is not executable 126,
// as in a shell. Everything else is the command's own exit.
func (l *Local) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("local: exec: empty argv")
	}
	var s session
	if req.SessionID != "" {
		var ok bool
		if s, ok = l.session(req.SessionID); !ok {
			return sandbox.Exit{}, fmt.Errorf("local: exec: no session %q (never prepared, or torn down)", req.SessionID)
		}
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("local: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(code int, format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: local: "+format+"\n", args...)
		return sandbox.Exit{Code: code}, nil
	}
	if what := req.Limits.ResourceLimit(); what != "" {
		return refuse(sandbox.ExitUnsupported, "this backend cannot enforce a %s limit; use local-hardened or docker", what)
	}
	dir, err := s.workdir(req.Workdir)
	if err != nil {
		return refuse(sandbox.ExitUnsupported, "%v", err)
	}
	rel := dir
	if s.root != "" {
		rel, _ = filepath.Rel(s.root, dir)
	}
	if hit := sandbox.DeniedArgument(s.policy.DeniedPaths, rel, req.Argv); hit != "" {
		return refuse(sandbox.ExitUnsupported, "%s is a denied path; the command was not run", hit)
	}
	if hit := sandbox.DeniedPathArgument(s.denied, dir, req.Argv); hit != "" {
		return refuse(sandbox.ExitUnsupported, "%s is a denied path; the command was not run", hit)
	}
	env, err := l.env(req.Env, s.policy.EnvAllowlist)
	if err != nil {
		return refuse(sandbox.ExitUnsupported, "%v", err)
	}
	path, err := lookPath(req.Argv[0], dir, envValue(env, "PATH"))
	switch {
	case errors.Is(err, errNotExecutable):
		return refuse(126, "permission denied: %s", req.Argv[0])
	case err != nil:
		return refuse(127, "command not found: %s", req.Argv[0])
	}
	cfg := l.settings()
	timeout, limit := req.Limits.Timeout, req.Limits.MaxOutputBytes
	if timeout <= 0 {
		timeout = cfg.timeout
	}
	if limit <= 0 {
		limit = cfg.MaxOutputBytes
	}
	cmd := &exec.Cmd{Path: path, Args: req.Argv, Dir: dir, Env: env, SysProcAttr: proc.Attr()}
	return proc.Run(ctx, cmd, sio, proc.Options{Backend: "local", Timeout: timeout, Limit: limit, Live: &l.live, StartFailure: 126})
}

// errNotExecutable is a command that exists but cannot be executed.
var errNotExecutable = errors.New("not executable")

// lookPath finds name the way a shell would, using the command's own PATH
// and resolving relative entries against its working directory. A name
// with a slash is taken as a path; one that is a directory or lacks an
// execute bit is errNotExecutable (a shell's 126). In a PATH search a
// non-executable file is reported only when nothing later matches.
func lookPath(name, dir, path string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		fi, err := os.Stat(name)
		switch {
		case err != nil:
			return "", exec.ErrNotFound
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			return "", errNotExecutable
		}
		return name, nil
	}
	if name == "" {
		return "", exec.ErrNotFound
	}
	found := exec.ErrNotFound
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil || fi.IsDir():
			continue
		case fi.Mode()&0o111 == 0:
			found = errNotExecutable
			continue
		}
		return p, nil
	}
	return "", found
}
