package modal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// stopTimeout bounds `modal container stop` at Teardown.
const stopTimeout = time.Minute

// session is a prepared workspace and the container it is copied to.
type session struct {
	// root is the local workspace.
	root string
	// container is what `modal container exec` addresses; sandboxID is the
	// SDK's id (sb-...) used by the sync helper. For an existing container
	// both are the configured id.
	container, sandboxID string
	// created is set when this backend created the sandbox, so Teardown
	// stops it; an existing container is never stopped.
	created bool
	policy  sandbox.Policy
	cfg     settings

	// mu serialises syncs and commands: each command sees the workspace
	// the previous one left.
	mu sync.Mutex
	// mirror is the host side of the workspace copy.
	mirror *wsync.Mirror
}

// Prepare implements sandbox.Sandbox: it creates a Modal Sandbox through
// the SDK helper (Modal's CLI has no verb that creates one), or takes the
// configured existing container. The workspace is copied up before the
// first command.
func (m *Modal) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	cfg := m.settings()
	ws := req.Workspace
	if !filepath.IsAbs(ws) {
		return sandbox.Session{}, fmt.Errorf("modal: prepare: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return sandbox.Session{}, fmt.Errorf("modal: prepare: workspace %s is not a directory", ws)
	}
	if reason := m.unavailable(cfg); reason != "" {
		return sandbox.Session{}, fmt.Errorf("modal: prepare: %s", reason)
	}
	if len(req.Policy.ReadOnlyPaths) > 0 {
		return sandbox.Session{}, fmt.Errorf("modal: prepare: this backend cannot enforce read-only paths (%s): the container's copy of the workspace is writable and copied back",
			strings.Join(req.Policy.ReadOnlyPaths, ", "))
	}
	s := &session{root: ws, policy: req.Policy, cfg: cfg, mirror: wsync.New(ws, req.Policy.DeniedPaths)}
	if cfg.Container != "" {
		if !req.Policy.AllowNetwork {
			return sandbox.Session{}, fmt.Errorf("modal: prepare: cannot block network access in the existing container %s; leave `container` unset so Sparrow creates a sandbox with block_network", cfg.Container)
		}
		s.container, s.sandboxID = cfg.Container, cfg.Container
	} else {
		id, err := m.create(ctx, cfg, !req.Policy.AllowNetwork)
		if err != nil {
			return sandbox.Session{}, err
		}
		s.container, s.sandboxID, s.created = id.container(), id.SandboxID, true
	}
	sid := newID(req.RunID)
	m.mu.Lock()
	m.sessions[sid] = s
	m.mu.Unlock()
	return sandbox.Session{ID: sid, Workdir: cfg.Workdir}, nil
}

// created is what the helper's create verb prints.
type created struct {
	SandboxID   string `json:"sandbox_id"`
	ContainerID string `json:"container_id"`
}

// container is the id `modal container exec` gets: the container (task)
// id when the SDK gave one, else the sandbox id.
func (c created) container() string {
	if c.ContainerID != "" {
		return c.ContainerID
	}
	return c.SandboxID
}

// create runs the helper's create verb and parses its answer.
func (m *Modal) create(ctx context.Context, cfg settings, blockNetwork bool) (created, error) {
	arg, _ := json.Marshal(map[string]any{
		"app": cfg.App, "image": cfg.Image, "timeout": int(cfg.timeout / time.Second),
		"workdir": cfg.Workdir, "block_network": blockNetwork,
	})
	var out, errOut bytes.Buffer
	if err := m.python(ctx, cfg, nil, &out, &errOut, "create", string(arg)); err != nil {
		return created{}, fmt.Errorf("modal: prepare: create sandbox: %w", toolError(err, errOut.String(), cfg.Python))
	}
	var c created
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &c); err != nil || c.SandboxID == "" {
		return created{}, fmt.Errorf("modal: prepare: create sandbox: the helper answered %q, not a sandbox id", strings.TrimSpace(out.String()))
	}
	return c, nil
}

// python runs the embedded helper with args.
func (m *Modal) python(ctx context.Context, cfg settings, stdin io.Reader, stdout, stderr io.Writer, args ...string) error {
	cmd := m.command(ctx, cfg.Python, append([]string{"-c", helperPy}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	return cmd.Run()
}

// command prepares name, found on the plugin's own PATH, with the
// plugin's environment.
func (m *Modal) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = m.environ()
	cmd.WaitDelay = 5 * time.Second
	if p, err := m.lookPath(name); err == nil {
		cmd.Path, cmd.Err = p, nil
	} else {
		cmd.Err = fmt.Errorf("%s: %w", name, exec.ErrNotFound)
	}
	return cmd
}

// toolError turns a failed helper or CLI run into an error that says what
// is missing and how to fix it.
func toolError(err error, stderr, tool string) error {
	stderr = strings.TrimSpace(stderr)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		if tool == "modal" || strings.HasSuffix(tool, "/modal") {
			return errors.New(fixInstall)
		}
		return fmt.Errorf("%s not found: install Python 3 and pip install modal, or set `python` in the sandbox \"modal\" block", tool)
	case isAuthError(stderr):
		return fmt.Errorf("modal is not authenticated (%s): run modal token new, or set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET", lastLine(stderr))
	case strings.Contains(stderr, "No module named 'modal'"), strings.Contains(stderr, `No module named "modal"`):
		return fmt.Errorf("%s cannot import modal: pip install modal for that interpreter, or set `python`", tool)
	case stderr != "":
		return fmt.Errorf("%w: %s", err, lastLine(stderr))
	}
	return err
}

// isAuthError recognises Modal's messages for missing or rejected
// credentials (modal.exception.AuthError "Token missing. Could not
// authenticate client...", gRPC UNAUTHENTICATED).
func isAuthError(stderr string) bool {
	s := strings.ToLower(stderr)
	for _, k := range []string{"token missing", "could not authenticate", "autherror", "unauthenticated", "token validation", "invalid token"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// newID names a session after its run, with a random suffix.
func newID(runID string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	if runID == "" {
		runID = "modal"
	}
	return runID + "-" + hex.EncodeToString(b)
}

// Teardown implements sandbox.Sandbox. A sandbox this backend created is
// stopped with `modal container stop ID`; an existing container is left
// running. Tearing down an unknown session is not an error (idempotent).
func (m *Modal) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if !ok || !s.created {
		return sandbox.Released{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	var errOut bytes.Buffer
	cmd := m.command(ctx, s.cfg.Modal, "container", "stop", s.container)
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return sandbox.Released{}, fmt.Errorf("modal: teardown: modal container stop %s: %w", s.container, toolError(err, errOut.String(), s.cfg.Modal))
	}
	return sandbox.Released{}, nil
}

func (m *Modal) session(id string) (*session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	return s, ok
}
