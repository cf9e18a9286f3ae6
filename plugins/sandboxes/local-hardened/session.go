package localhardened

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/local"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// session is a prepared workspace and the policy its commands run under.
type session struct {
	// root is the workspace as the caller named it; realRoot the same with
	// symlinks resolved.
	root, realRoot string
	policy         sandbox.Policy
	// boxes hold the sandbox the session's commands share, started by
	// the first command that fits it.
	boxes boxes
}

// Prepare implements sandbox.Sandbox. It refuses, naming what is missing
// and how to get it, where the machine lacks a required primitive, and
// checks the workspace and every extra path exist.
func (h *Hardened) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	if rep := h.probe(ctx); !rep.Usable() {
		return sandbox.Session{}, fmt.Errorf("local-hardened cannot run here: missing %s", strings.Join(rep.Missing, "; "))
	}
	ws, resolved, err := local.Workspace(req.Workspace)
	if err != nil {
		return sandbox.Session{}, fmt.Errorf("local-hardened: prepare: %w", err)
	}
	var errs []error
	for _, p := range append(append([]string{}, req.Policy.ReadOnlyPaths...), req.Policy.ReadWritePaths...) {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("path %q is not absolute", p))
		} else if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("extra path %s: %w", p, errors.Unwrap(err)))
		}
	}
	if len(errs) > 0 {
		return sandbox.Session{}, fmt.Errorf("local-hardened: prepare: %w", errors.Join(errs...))
	}
	id := local.SessionID(req.RunID, "hardened")
	h.mu.Lock()
	h.sessions[id] = &session{root: ws, realRoot: resolved, policy: req.Policy}
	h.mu.Unlock()
	return sandbox.Session{ID: id, Workdir: ws}, nil
}

// Teardown implements sandbox.Sandbox: the session's sandbox stops, with
// any command still running in it, and its cgroup is removed. An unknown
// session is not an error.
func (h *Hardened) Teardown(_ context.Context, id string) (sandbox.Released, error) {
	h.mu.Lock()
	s := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if s != nil {
		s.boxes.closeAll()
	}
	return sandbox.Released{}, nil
}

func (h *Hardened) session(id string) (*session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[id]
	return s, ok
}
