package singularity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// bindUnsafe are the characters an Apptainer bind specification
// (src[:dest[:opts]], comma-separated) cannot carry in a path.
const bindUnsafe = ":,"

// session is a prepared workspace: the image, the policy, and a private
// scratch directory holding the mask sources, env files and a pulled
// image.
type session struct {
	// root is the workspace as the caller named it; realRoot is root with
	// symlinks resolved, for escape checks.
	root, realRoot string
	// binary is the CLI found at Prepare; image is what exec runs (a
	// local path, or the image pulled into dir).
	binary, image string
	// dir is the private scratch directory, removed at Teardown.
	dir    string
	policy sandbox.Policy
	// binds are the policy's other paths, bound on every exec.
	binds []bind
	cfg   settings
}

// bind is one --bind: a host path, where the command sees it, and
// whether it is read-only.
type bind struct {
	src, dst string
	ro       bool
}

func (b bind) spec() string {
	s := b.src + ":" + b.dst
	if b.ro {
		s += ":ro"
	}
	return s
}

// Prepare implements sandbox.Sandbox. It checks the CLI and its version,
// makes the session's scratch directory, and readies the image: a local
// one must exist, a URI is pulled into the scratch directory once, so
// commands neither reach the registry nor race on Apptainer's cache.
func (b *Singularity) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	cfg := b.settings()
	ws := req.Workspace
	if !filepath.IsAbs(ws) {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: workspace %s is not a directory", ws)
	}
	if strings.ContainsAny(ws, bindUnsafe) {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: workspace %s: Apptainer bind specifications cannot carry ':' or ','", ws)
	}
	resolved, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: resolve workspace: %w", err)
	}
	if reason := b.unavailable(cfg); reason != "" {
		return sandbox.Session{}, errors.New(reason)
	}
	bin, _ := b.binary(cfg)
	s := &session{root: ws, realRoot: resolved, binary: bin, image: cfg.Image, policy: req.Policy, cfg: cfg}
	if s.binds, err = policyBinds(ws, cfg.Workdir, req.Policy); err != nil {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: %w", err)
	}
	if err := b.checkVersion(ctx, bin); err != nil {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: %w", err)
	}
	if !isURI(cfg.Image) {
		if _, err := os.Stat(cfg.Image); err != nil {
			return sandbox.Session{}, fmt.Errorf("singularity: prepare: image %s does not exist: build or pull it (%s pull %s docker://debian:12-slim), or set image to a URI such as docker://debian:12-slim",
				cfg.Image, filepath.Base(bin), cfg.Image)
		}
	}
	id := newID(req.RunID)
	if s.dir, err = scratchDir(cfg.stateDir, id); err != nil {
		return sandbox.Session{}, fmt.Errorf("singularity: prepare: %w", err)
	}
	if isURI(cfg.Image) {
		s.image = filepath.Join(s.dir, "image.sif")
		if err := b.pull(ctx, s, cfg.Image); err != nil {
			_ = os.RemoveAll(s.dir)
			return sandbox.Session{}, fmt.Errorf("singularity: prepare: %w", err)
		}
	}
	b.mu.Lock()
	b.sessions[id] = s
	b.mu.Unlock()
	return sandbox.Session{ID: id, Workdir: cfg.Workdir}, nil
}

// policyBinds turns the policy's read-write and read-only paths into
// binds. The workspace itself is bound read-write on every exec, so paths
// inside it need a bind only to be made read-only; paths outside it are
// bound where they are on the host. Every path must exist: Apptainer
// cannot bind what is not there.
func policyBinds(root, workdir string, p sandbox.Policy) ([]bind, error) {
	var out []bind
	add := func(host string, ro bool) error {
		if !filepath.IsAbs(host) {
			return fmt.Errorf("policy path %q is not absolute", host)
		}
		host = filepath.Clean(host)
		if strings.ContainsAny(host, bindUnsafe) {
			return fmt.Errorf("policy path %s: Apptainer bind specifications cannot carry ':' or ','", host)
		}
		if _, err := os.Stat(host); err != nil {
			return fmt.Errorf("policy path %s does not exist; Apptainer can only bind existing paths", host)
		}
		dst := host
		if within(root, host) {
			if !ro {
				return nil
			}
			rel, _ := filepath.Rel(root, host)
			dst = path.Join(workdir, filepath.ToSlash(rel))
		}
		out = append(out, bind{src: host, dst: dst, ro: ro})
		return nil
	}
	for _, p := range p.ReadWritePaths {
		if err := add(p, false); err != nil {
			return nil, err
		}
	}
	for _, p := range p.ReadOnlyPaths {
		if err := add(p, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scratchDir makes the session's private directory, under Sparrow's state
// directory when there is one (pulled images can be large; /tmp may be
// memory), and in it the empty file and directory that mask denied paths.
func scratchDir(stateDir, id string) (string, error) {
	parent := os.TempDir()
	if sd := stateDir; sd != "" {
		parent = filepath.Join(sd, "singularity")
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(parent, "session-"+id+"-")
	if err != nil {
		return "", fmt.Errorf("scratch directory: %w", err)
	}
	err = errors.Join(
		os.WriteFile(filepath.Join(dir, maskFile), nil, 0o444),
		os.Mkdir(filepath.Join(dir, maskDir), 0o555),
	)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("mask sources: %w", err)
	}
	return dir, nil
}

// newID names a session after its run, with a random suffix so two
// Prepares for one run never collide.
func newID(runID string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails since Go 1.24
	if runID == "" {
		runID = "singularity"
	}
	return runID + "-" + hex.EncodeToString(b)
}

// Teardown implements sandbox.Sandbox. No container outlives its command,
// so only the scratch directory (env files, masks, a pulled image) is
// removed; the workspace is the user's and is left as it is. An unknown
// session is not an error.
func (b *Singularity) Teardown(_ context.Context, id string) (sandbox.Released, error) {
	b.mu.Lock()
	s, ok := b.sessions[id]
	delete(b.sessions, id)
	b.mu.Unlock()
	if !ok {
		return sandbox.Released{}, nil
	}
	if err := removeAll(s.dir); err != nil {
		return sandbox.Released{}, fmt.Errorf("singularity: teardown: %w", err)
	}
	return sandbox.Released{}, nil
}

// removeAll removes dir, making the read-only mask directory writable
// first so its removal cannot fail on permissions.
func removeAll(dir string) error {
	_ = os.Chmod(filepath.Join(dir, maskDir), 0o700)
	return os.RemoveAll(dir)
}

func (b *Singularity) session(id string) (*session, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[id]
	return s, ok
}

// workdir maps a request's working directory to the host directory that
// holds it and the path the command sees. Empty is the workspace; a
// relative one is below it; an absolute one may be given as the command
// sees it (below the container workdir) or as the host path below the
// workspace. Neither the path nor what its symlinks point to may leave
// the workspace. The error text is for the command's stderr.
func (s *session) workdir(dir string) (host, inside string, err error) {
	orig := dir
	switch {
	case dir == "":
		dir = s.root
	case path.IsAbs(dir) && (dir == s.cfg.Workdir || strings.HasPrefix(dir, s.cfg.Workdir+"/")):
		rel := strings.TrimPrefix(strings.TrimPrefix(path.Clean(dir), s.cfg.Workdir), "/")
		dir = filepath.Join(s.root, filepath.FromSlash(rel))
	case !filepath.IsAbs(dir):
		dir = filepath.Join(s.root, dir)
	}
	dir = filepath.Clean(dir)
	if !within(s.root, dir) {
		return "", "", fmt.Errorf("workdir %q is outside the workspace %s", orig, s.cfg.Workdir)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", fmt.Errorf("workdir %q does not exist", orig)
	}
	if !within(s.realRoot, resolved) {
		return "", "", fmt.Errorf("workdir %q resolves outside the workspace", orig)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("workdir %q is not a directory", orig)
	}
	rel, _ := filepath.Rel(s.root, dir)
	return dir, path.Join(s.cfg.Workdir, filepath.ToSlash(rel)), nil
}

// within reports whether path is root or below it; both are clean.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
