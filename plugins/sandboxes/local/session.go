package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// session is a prepared workspace and the policy its commands run under.
type session struct {
	// root is the workspace as the caller named it; commands run under it.
	root string
	// realRoot is root with symlinks resolved, for escape checks.
	realRoot string
	policy   sandbox.Policy
	// denied are the policy's DenyRead and DenyWrite paths inside the
	// workspace: this backend cannot hide them, so commands naming them
	// are refused. Those outside it are not this backend's to enforce.
	denied []string
}

// Prepare implements sandbox.Sandbox. The workspace must be an existing
// absolute directory. Denied paths, and DenyRead and DenyWrite paths
// inside the workspace, are enforced as seed rules (see Exec) and the env
// allowlist is honoured; read-only paths and network denial cannot be
// enforced here and are refused, so the kernel never believes a rule
// holds when it does not. DenyRead and DenyWrite paths outside the
// workspace (the default home denials) are ignored: without filesystem
// isolation this backend cannot hide them, and says so in Capabilities.
func (l *Local) Prepare(_ context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	ws, resolved, err := Workspace(req.Workspace)
	if err != nil {
		return sandbox.Session{}, fmt.Errorf("local: prepare: %w", err)
	}
	p := req.Policy
	if len(p.ReadOnlyPaths) > 0 {
		return sandbox.Session{}, fmt.Errorf("local: prepare: this backend cannot enforce read-only paths (%s); use local-hardened or docker",
			strings.Join(p.ReadOnlyPaths, ", "))
	}
	if !p.AllowNetwork {
		return sandbox.Session{}, errors.New("local: prepare: this backend cannot block network access; use local-hardened or docker")
	}
	var denied []string
	for _, d := range append(slices.Clone(p.DenyRead), p.DenyWrite...) {
		if d = filepath.Clean(d); filepath.IsAbs(d) && (within(ws, d) || within(resolved, d)) {
			denied = append(denied, d)
		}
	}
	id := newID(req.RunID)
	l.mu.Lock()
	l.sessions[id] = session{root: ws, realRoot: resolved, policy: p, denied: denied}
	l.mu.Unlock()
	return sandbox.Session{ID: id, Workdir: ws}, nil
}

// Workspace checks a workspace for this backend and the ones built on it:
// an existing absolute directory. It returns the path cleaned and with
// symlinks resolved (for escape checks).
func Workspace(ws string) (clean, resolved string, err error) {
	if !filepath.IsAbs(ws) {
		return "", "", fmt.Errorf("workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil {
		return "", "", fmt.Errorf("workspace %s is not a directory: %w", ws, err)
	} else if !fi.IsDir() {
		return "", "", fmt.Errorf("workspace %s is not a directory", ws)
	}
	resolved, err = filepath.EvalSymlinks(ws)
	if err != nil {
		return "", "", fmt.Errorf("resolve workspace: %w", err)
	}
	return ws, resolved, nil
}

// newID names a session after its run.
func newID(runID string) string { return SessionID(runID, "local") }

// SessionID names a session after its run (or fallback without one), with
// a random suffix so two Prepares for one run never collide.
func SessionID(runID, fallback string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails since Go 1.24
	if runID == "" {
		runID = fallback
	}
	return runID + "-" + hex.EncodeToString(b)
}

// Teardown implements sandbox.Sandbox. The workspace itself is left as it
// is: it is the user's directory. An unknown session is not an error.
func (l *Local) Teardown(_ context.Context, id string) (sandbox.Released, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sessions, id)
	return sandbox.Released{}, nil
}

// session looks up a prepared session; ok is false for an unknown id.
func (l *Local) session(id string) (session, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.sessions[id]
	return s, ok
}

// workdir resolves where a command runs (see Workdir).
func (s session) workdir(dir string) (string, error) {
	return Workdir(s.root, s.realRoot, dir)
}

// Workdir resolves where a command runs, for this backend and the ones
// built on it. root is the workspace ("" for none) and realRoot the same
// with symlinks resolved. Without a workspace dir must be an absolute
// directory; with one, an empty dir is the workspace, a relative one is
// taken inside it, and neither the path nor what its symlinks point to
// may leave it. The error text is for the command's stderr.
func Workdir(root, realRoot, dir string) (string, error) {
	s := struct{ root, realRoot string }{root, realRoot}
	orig := dir
	if s.root == "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("workdir %q must be absolute when no session is given", dir)
		}
		return checkDir(filepath.Clean(dir), orig)
	}
	if dir == "" {
		dir = s.root
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.root, dir)
	}
	dir = filepath.Clean(dir)
	if !within(s.root, dir) {
		return "", fmt.Errorf("workdir %q is outside the workspace %s", orig, s.root)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("workdir %q does not exist", orig)
	}
	if !within(s.realRoot, resolved) {
		return "", fmt.Errorf("workdir %q resolves to %s, outside the workspace %s", orig, resolved, s.root)
	}
	return checkDir(dir, orig)
}

func checkDir(dir, orig string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("workdir %q does not exist", orig)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workdir %q is not a directory", orig)
	}
	return dir, nil
}

// within reports whether path is root or below it; both are clean.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
