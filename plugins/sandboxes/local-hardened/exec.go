package localhardened

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/local"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// ctimeSlack covers the coarse clock file timestamps use: an entry made
// just after the command started may carry a time slightly before it.
const ctimeSlack = 20 * time.Millisecond

// Exec implements sandbox.Sandbox. A session's commands share one
// sandbox, started by the first of them (see execShared); a command that
// does not fit it, or one without a session, gets a sandbox of its own.
// Protocol problems are Go errors.
// Requests this backend cannot honour (a limit it cannot enforce here, a
// working directory outside the workspace, a machine without the
// primitives) exit 127 with the reason on
// stderr; a command not found exits 127 and one not executable 126.
// Everything else is the command's own exit.
func (h *Hardened) Exec(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, errors.New("local-hardened: exec: empty argv")
	}
	s := &session{}
	if req.SessionID != "" {
		var ok bool
		if s, ok = h.session(req.SessionID); !ok {
			return sandbox.Exit{}, fmt.Errorf("local-hardened: exec: no session %q (never prepared, or torn down)", req.SessionID)
		}
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Exit{}, fmt.Errorf("local-hardened: exec: %w", err)
	}
	stderr := proc.OrDiscard(sio.Stderr)
	refuse := func(code int, format string, args ...any) (sandbox.Exit, error) {
		fmt.Fprintf(stderr, "sparrow: local-hardened: "+format+"\n", args...)
		return sandbox.Exit{Code: code}, nil
	}
	rep := h.probe(ctx)
	if !rep.Usable() {
		return refuse(sandbox.ExitUnsupported, "cannot run here: missing %s", strings.Join(rep.Missing, "; "))
	}
	dir, err := local.Workdir(s.root, s.realRoot, req.Workdir)
	if err != nil {
		return refuse(sandbox.ExitUnsupported, "%v", err)
	}
	// No string matching on argv (sandbox.DeniedArgument): the denied
	// paths are enforced in the filesystem the command sees, whatever
	// program computes them.
	root := s.root
	if root == "" {
		root = dir
	}
	cfg := h.settings()
	env, home, err := h.env(req.Env, s.policy.EnvAllowlist)
	if err != nil {
		return refuse(sandbox.ExitUnsupported, "%v", err)
	}
	spec, err := h.spec(cfg, s, root, dir, home, req)
	if err != nil {
		return refuse(sandbox.ExitUnsupported, "%v", err)
	}
	if spec.HomeDir, err = h.homeDir(root); err != nil {
		return refuse(sandbox.ExitUnsupported, "%v", err)
	}
	spec.Argv, spec.Env = req.Argv, env
	before := scanDenied(root, s.policy.DeniedPaths)
	hideDenied(&spec, root, before)
	return h.run(ctx, call{s: s, spec: spec, rep: rep, cfg: cfg, req: req, root: root, before: before}, sio)
}

// call is one command, checked and laid out.
type call struct {
	s    *session
	spec confine.Spec
	rep  confine.Report
	cfg  settings
	req  sandbox.ExecRequest
	root string
	// before are the denied entries found before the command.
	before []deniedEntry
}

// run runs the call in the session's sandbox when it fits, else in one
// of its own, under its timeout, output cap and disk watch, and reports
// what the command hit.
func (h *Hardened) run(ctx context.Context, c call, sio sandbox.IO) (sandbox.Exit, error) {
	stderr := proc.OrDiscard(sio.Stderr)
	timeout, limit := c.req.Limits.Timeout, c.req.Limits.MaxOutputBytes
	if timeout <= 0 {
		timeout = c.cfg.timeout
	}
	if limit <= 0 {
		limit = c.cfg.MaxOutputBytes
	}
	opts := proc.Options{Backend: "local-hardened", Timeout: timeout, Limit: limit, Live: &h.live, StartFailure: sandbox.ExitUnsupported}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var disk *diskWatch
	if d := diskLimit(c.cfg, c.req.Limits); d > 0 {
		disk = watchDisk(runCtx, append([]string{c.root}, c.spec.ReadWrite...), d, stop)
	}
	started := time.Now().Add(-ctimeSlack)
	var exit sandbox.Exit
	var oom, ran bool
	var err error
	if c.s.root != "" && !h.perCommand && h.shares(c.cfg, c.s, c.req, c.spec.Home) {
		asked := c.req.Limits.MemoryBytes > 0 || c.req.Limits.MaxPids > 0
		exit, oom, ran, err = h.execShared(runCtx, c.s, c.spec, c.rep, sio, opts, asked)
	}
	if !ran {
		var refused bool
		if exit, oom, refused, err = h.execAlone(runCtx, c.spec, c.rep, c.req, sio, opts); refused {
			return exit, nil
		}
	}
	if err != nil {
		return exit, err
	}
	if disk != nil && disk.exceeded() {
		fmt.Fprintf(stderr, "sparrow: local-hardened: the command wrote more than %s to disk and was stopped\n", human(disk.limit))
		if exit.Code == 0 {
			exit.Code = 1
		}
	}
	if oom {
		fmt.Fprintf(stderr, "sparrow: local-hardened: the command reached its memory limit (%s); a process was killed\n", human(c.spec.Limits.MemoryBytes))
	}
	removeCreatedDenied(stderr, c.root, c.s.policy.DeniedPaths, c.before, started)
	return exit, nil
}

// hideDenied adds the denied entries found before a command to its spec:
// hidden, or protected (a .git directory stays readable).
func hideDenied(spec *confine.Spec, root string, before []deniedEntry) {
	for _, e := range before {
		if filepath.Base(e.path) == readableName && e.isDir {
			spec.Protected = append(spec.Protected, e.path)
		} else {
			spec.Hidden = append(spec.Hidden, e.path)
		}
		// Every directory between the workspace and a denied entry is
		// bound onto itself: a mount point cannot be renamed, so
		// `mv nested n2` cannot carry a repository or a key to a path the
		// masks and the scan below do not know.
		for d := filepath.Dir(e.path); d != root && len(d) > len(root); d = filepath.Dir(d) {
			if !slices.Contains(spec.ReadWrite, d) {
				spec.ReadWrite = append(spec.ReadWrite, d)
			}
		}
	}
}

// removeCreatedDenied removes the denied paths a command created (found
// now, not before, changed since it started), saying so on stderr.
func removeCreatedDenied(stderr io.Writer, root string, patterns []string, before []deniedEntry, started time.Time) {
	for _, e := range scanDenied(root, patterns) {
		if e.changed.Before(started) || slices.ContainsFunc(before, func(b deniedEntry) bool { return b.path == e.path }) {
			continue
		}
		r, _ := filepath.Rel(root, e.path)
		if err := os.RemoveAll(e.path); err != nil {
			fmt.Fprintf(stderr, "sparrow: local-hardened: the command created the denied path %s and it could not be removed: %v\n", r, err)
			continue
		}
		fmt.Fprintf(stderr, "sparrow: local-hardened: removed %s: the command created a denied path (a planted repository, hook or secret never reaches the host)\n", r)
	}
}

// execAlone runs the command in a sandbox of its own, started for it
// and ended with it. refused means it could not be confined and stderr
// says why.
func (h *Hardened) execAlone(ctx context.Context, spec confine.Spec, rep confine.Report, req sandbox.ExecRequest, sio sandbox.IO, o proc.Options) (exit sandbox.Exit, oom, refused bool, err error) {
	stderr := proc.OrDiscard(sio.Stderr)
	cmd, err := confine.Command(spec, rep)
	if err != nil {
		fmt.Fprintf(stderr, "sparrow: local-hardened: %v\n", err)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}, false, true, nil
	}
	defer cmd.Cleanup()
	for _, n := range cmd.Notes {
		if req.Limits.MemoryBytes > 0 || req.Limits.MaxPids > 0 {
			fmt.Fprintf(stderr, "sparrow: local-hardened: %s\n", n)
		}
	}
	cmd.SysProcAttr = proc.Attr()
	o.Deliver = cmd.Signal
	exit, err = proc.Run(ctx, cmd.Cmd, sio, o)
	cmd.Kill()
	return exit, cmd.OOMKilled(), false, err
}

// shares reports whether a command fits the session's sandbox: the
// network, limits and home a request without overrides gets. Anything
// else (AllowNetwork over a policy without, other limits, another HOME)
// runs in a sandbox of its own.
func (h *Hardened) shares(cfg settings, s *session, req sandbox.ExecRequest, home string) bool {
	if req.AllowNetwork && !s.policy.AllowNetwork || limits(cfg, req.Limits) != limits(cfg, sandbox.Limits{}) {
		return false
	}
	if _, ok := req.Env["HOME"]; !ok {
		return true
	}
	_, base, err := h.env(nil, s.policy.EnvAllowlist)
	return err == nil && home == base
}

// spec compiles the session's policy, the configuration and the request
// into what confine runs.
func (h *Hardened) spec(cfg settings, s *session, root, dir, home string, req sandbox.ExecRequest) (confine.Spec, error) {
	spec := confine.Spec{
		Dir:     dir,
		System:  true,
		Home:    home,
		Network: s.policy.AllowNetwork || req.AllowNetwork,
		Init:    h.initPath(),
	}
	var errs []error
	abs := func(list []string) []string {
		var out []string
		for _, p := range list {
			switch {
			case p == "~" || strings.HasPrefix(p, "~/"):
				if home == "" {
					errs = append(errs, fmt.Errorf("%s: HOME is not set", p))
					continue
				}
				p = filepath.Join(home, p[1:])
			case !filepath.IsAbs(p):
				p = filepath.Join(root, p)
			}
			out = append(out, filepath.Clean(p))
		}
		return out
	}
	spec.ReadWrite = append([]string{root}, abs(cfg.ExtraWrite)...)
	for _, p := range s.policy.ReadWritePaths {
		if p != root && !slices.Contains(spec.ReadWrite, p) {
			spec.ReadWrite = append(spec.ReadWrite, p)
		}
	}
	spec.ReadOnly = append(abs(cfg.ExtraRead), s.policy.ReadOnlyPaths...)
	spec.Hidden = append(abs(cfg.DenyRead), s.policy.DenyRead...)
	spec.Protected = append(abs(cfg.DenyWrite), s.policy.DenyWrite...)
	if len(errs) > 0 {
		return spec, errors.Join(errs...)
	}
	spec.Limits = limits(cfg, req.Limits)
	return spec, nil
}

// limits are a request's limits, the configured ones where it sets none.
func limits(cfg settings, l sandbox.Limits) confine.Limits {
	return confine.Limits{
		MemoryBytes: pick(l.MemoryBytes, cfg.memory),
		Pids:        pick(l.MaxPids, cfg.Pids),
		FileBytes:   diskLimit(cfg, l),
		TmpBytes:    diskLimit(cfg, l),
		CPUTime:     time.Duration(pick(int64(l.CPUTime), int64(cfg.cpu))),
	}
}

func pick(req, cfg int64) int64 {
	if req > 0 {
		return req
	}
	return cfg
}

func diskLimit(cfg settings, l sandbox.Limits) int64 { return pick(l.DiskBytes, cfg.disk) }

// env builds a command's environment: local's base variables that the
// policy allows, TMPDIR the private /tmp, the request's on top. home is
// the HOME commands get.
func (h *Hardened) env(extra map[string]string, allow []string) (env []string, home string, err error) {
	vals := local.BaseEnv(h.getenv, allow)
	vals["TMPDIR"] = "/tmp"
	if _, ok := vals["PATH"]; !ok {
		vals["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	env, err = sandbox.MergeEnv(vals, extra)
	if err != nil {
		return nil, "", err
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(v) {
			home = filepath.Clean(v)
		}
	}
	return env, home, nil
}

// homeDir is the sandbox's own home for a workspace, kept in Sparrow's
// state directory so caches (Go's build cache, npm's, pip's) survive from
// one command and one run to the next; it is never the user's home, and
// nothing of it reaches the host's tools. "" when no state directory is
// known: each command then gets an empty home.
func (h *Hardened) homeDir(workspace string) (string, error) {
	h.mu.Lock()
	state := h.stateDir
	h.mu.Unlock()
	if state == "" {
		return "", nil
	}
	sum := sha256.Sum256([]byte(workspace))
	dir := filepath.Join(state, "local-hardened", "homes", filepath.Base(workspace)+"-"+hex.EncodeToString(sum[:4]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox home: %w", err)
	}
	return dir, nil
}

// human prints a byte count the way the flags take it.
func human(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "G"}, {20, "M"}, {10, "K"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
