package wasmtool

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// Defaults for the zero values of Call.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOutputBytes = 1 << 20
	// stderrTailBytes is how much of stderr a call keeps: the last bytes.
	stderrTailBytes = 64 << 10
)

// Call is one invocation of a module.
type Call struct {
	// Tool is the name of the tool being called: the guest's argv[0], the
	// request's "tool" field, and the name in errors. One module may serve
	// several tools and dispatch on it. Empty means the module's name.
	Tool string
	// Args are the tool's arguments, a JSON value (normally an object);
	// empty means {}.
	Args json.RawMessage
	// Workspace is the host directory mounted at /workspace, the guest's
	// only directory. Empty means the guest sees no file system at all.
	Workspace string
	// Writable mounts the workspace read-write; otherwise it is read-only
	// and every change is refused (EROFS).
	Writable bool
	// Hide reports whether a workspace path is hidden from the guest. It
	// gets a cleaned, slash-separated path relative to the workspace
	// (".env", "src/.env", ".git/config"), is asked about every directory
	// on the way to a path and every element of a symbolic link's target,
	// and a hidden path cannot be opened, listed, created, linked, or
	// renamed to or from (see the package doc). nil hides nothing.
	Hide func(rel string) bool
	// Timeout is the wall-time limit; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps stdout; zero means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxMemoryPages caps linear memory in 64 KiB pages; zero means the
	// Runtime's MaxMemoryPages, which it may not exceed.
	MaxMemoryPages uint32
}

// Result is a call that ran to completion: exit 0 and a valid result.
type Result struct {
	// Output is what the tool returns to the model.
	Output string
	// Error is the tool's own report of failure, to be shown to the model
	// as a tool error; empty on success.
	Error string
	// Stderr is the tail of the guest's log output.
	Stderr string
}

// guestWorkspace is where the workspace is mounted inside the guest.
const guestWorkspace = "/workspace"

// request is the JSON object the guest reads on stdin.
type request struct {
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Workspace string          `json:"workspace,omitempty"`
}

// response is the JSON object the guest writes on stdout.
type response struct {
	Output string `json:"output"`
	Error  string `json:"error"`
}

// Call runs the module once in a fresh instance. The error is nil when the
// guest exited 0 with a valid result; otherwise it is a *CallError (the
// tool failed or breached a limit) or a plain error (the call itself was
// malformed: bad arguments, a missing workspace, a cap above the ceiling).
func (m *Module) Call(ctx context.Context, c Call) (Result, error) {
	c, stdin, err := m.prepare(c)
	if err != nil {
		return Result{}, err
	}
	errTimeLimit := fmt.Errorf("exceeded its %s time limit", c.Timeout)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, c.Timeout, errTimeLimit)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	errOutput := fmt.Errorf("output exceeds %d bytes", c.MaxOutputBytes)
	stdout := &cappedWriter{max: c.MaxOutputBytes, onOverflow: func() { cancel(errOutput) }}
	stderr := &tailWriter{max: stderrTailBytes}
	mem := &limitedMemory{maxBytes: uint64(c.MaxMemoryPages) * pageSize}

	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances may run at once
		WithArgs(c.Tool).
		WithStdin(bytes.NewReader(stdin)).
		WithStdout(stdout).
		WithStderr(stderr).
		WithStartFunctions("_start")
	if c.Workspace != "" {
		ws, err := openWorkspace(c.Workspace, c.Writable, c.Hide)
		if err != nil {
			return Result{}, fmt.Errorf("tool %s: workspace: %w", c.Tool, err)
		}
		defer ws.Close() // after the instance, which closes the guest's files
		cfg = cfg.WithFSConfig(wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(ws, guestWorkspace))
	}
	if m.grants.Clock {
		// Sleeps end early when the call is stopped, so a sleeping guest
		// cannot outlive its time limit.
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithNanosleep(func(ns int64) {
			t := time.NewTimer(time.Duration(ns))
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		})
	}
	if m.grants.Random {
		cfg = cfg.WithRandSource(rand.Reader)
	}

	inst, runErr := m.r.rt.InstantiateModule(withAllocator(ctx, mem), m.compiled, cfg)
	if inst != nil {
		_ = inst.Close(context.WithoutCancel(ctx))
	}
	mem.free()
	if err := m.classify(ctx, c, runErr, stdout, stderr, mem, limitErrs{errOutput, errTimeLimit}); err != nil {
		return Result{}, err
	}
	return parse(c.Tool, stdout.buf.Bytes(), stderr.String())
}

// prepare fills in defaults, checks the call against the module and the
// runtime, and builds the request.
func (m *Module) prepare(c Call) (Call, []byte, error) {
	if c.Tool == "" {
		c.Tool = m.name
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	ceiling := m.r.maxPages
	switch {
	case c.MaxMemoryPages == 0:
		c.MaxMemoryPages = ceiling
	case c.MaxMemoryPages > ceiling:
		return c, nil, fmt.Errorf("tool %s: MaxMemoryPages %d is above the runtime's MaxMemoryPages %d", c.Tool, c.MaxMemoryPages, ceiling)
	}
	if m.minPages > c.MaxMemoryPages {
		return c, nil, fmt.Errorf("tool %s: needs %d memory pages at start, above its limit of %d", c.Tool, m.minPages, c.MaxMemoryPages)
	}
	req := request{Tool: c.Tool, Args: c.Args}
	if len(bytes.TrimSpace(req.Args)) == 0 {
		req.Args = json.RawMessage("{}")
	} else if !json.Valid(req.Args) {
		return c, nil, fmt.Errorf("tool %s: arguments are not valid JSON", c.Tool)
	}
	if c.Workspace != "" {
		abs, err := filepath.Abs(c.Workspace)
		if err != nil {
			return c, nil, fmt.Errorf("tool %s: workspace: %w", c.Tool, err)
		}
		if fi, err := os.Stat(abs); err != nil {
			return c, nil, fmt.Errorf("tool %s: workspace: %w", c.Tool, err)
		} else if !fi.IsDir() {
			return c, nil, fmt.Errorf("tool %s: workspace %s is not a directory", c.Tool, abs)
		}
		c.Workspace = abs
		req.Workspace = guestWorkspace
	}
	stdin, err := json.Marshal(req)
	if err != nil {
		return c, nil, fmt.Errorf("tool %s: encode request: %w", c.Tool, err)
	}
	return c, stdin, nil
}

// limitErrs are the causes a call's context is cancelled with when it
// breaches a limit.
type limitErrs struct{ output, time error }

// classify turns how the instance ended into nil (exit 0, within limits)
// or a *CallError. Limits are checked first: a breached limit is what
// made the guest exit or trap.
func (m *Module) classify(ctx context.Context, c Call, runErr error, stdout *cappedWriter, stderr *tailWriter, mem *limitedMemory, limits limitErrs) error {
	fail := func(kind ErrorKind, detail string) error {
		return &CallError{Tool: c.Tool, Kind: kind, Detail: detail, Stderr: stderr.String(), Err: runErr}
	}
	switch {
	case stdout.overflow:
		return fail(KindOutput, limits.output.Error())
	case errors.Is(context.Cause(ctx), limits.time):
		return fail(KindTimeout, limits.time.Error())
	case ctx.Err() != nil:
		return fail(KindCanceled, "cancelled: "+context.Cause(ctx).Error())
	case mem.breached():
		return fail(KindMemory, fmt.Sprintf("exceeded its memory limit of %d pages (%d MiB)", c.MaxMemoryPages, uint64(c.MaxMemoryPages)*pageSize>>20))
	case runErr == nil:
		return nil
	}
	var exit *sys.ExitError
	if errors.As(runErr, &exit) {
		return fail(KindExit, fmt.Sprintf("exit %d", exit.ExitCode()))
	}
	return fail(KindTrap, "trapped: "+runErr.Error())
}

// parse checks the stdout of a call of tool against the ABI: exactly one
// JSON object with string fields output and error.
func parse(tool string, stdout []byte, stderr string) (Result, error) {
	bad := func(detail string) (Result, error) {
		return Result{}, &CallError{Tool: tool, Kind: KindBadResult, Detail: detail, Stderr: stderr}
	}
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) == 0 {
		return bad("wrote no result on stdout")
	}
	if trimmed[0] != '{' {
		return bad("wrote invalid JSON: the result must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var resp response
	if err := dec.Decode(&resp); err != nil {
		return bad("wrote invalid JSON: " + err.Error())
	}
	if dec.More() {
		return bad("wrote invalid JSON: more than one value on stdout")
	}
	return Result{Output: resp.Output, Error: resp.Error, Stderr: stderr}, nil
}
