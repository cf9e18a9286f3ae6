// Package shell is the shell tool: one `/bin/sh -c` command in the
// workspace.
//
// Invariants:
//   - It never runs anything itself. Every command goes through
//     call.Host.Exec, which the kernel gates (on the command as given) and
//     hands to the configured sandbox; this package does not import os/exec.
//   - Output streams to call.Output as it arrives; the model gets the head
//     and the tail of long output and always the exit status.
//   - A non-zero exit is information for the model, not a tool error;
//     timeouts and "could not run" (126, 127) are errors.
package shell

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed shell.md
var description string

// Limits.
const (
	defaultTimeout = 120 * time.Second
	maxTimeout     = 1800 * time.Second
	maxOutputBytes = 4 << 20
)

// Tool is the shell tool. The zero value is ready to use.
type Tool struct{}

// Spec implements tool.Tool.
func (Tool) Spec() tool.Spec {
	return tool.Spec{
		Name: "shell", Description: description, Risk: tool.RiskExec, PathArguments: []string{"workdir"},
		InputSchema: []byte(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command line, run by /bin/sh -c."},` +
			`"workdir":{"type":"string","description":"Workspace-relative directory to run in (default: the workspace root)."},` +
			`"timeout_seconds":{"type":"integer","minimum":1,"maximum":1800,"description":"Kill the command after this long (default 120)."}` +
			`},"required":["command"],"additionalProperties":false}`),
	}
}

type args struct {
	Command        string `json:"command"`
	Workdir        string `json:"workdir"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
}

// Invoke implements tool.Tool.
func (Tool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a args
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return tool.Errorf("command is required"), nil
	}
	timeout := defaultTimeout
	if a.TimeoutSeconds != nil {
		if *a.TimeoutSeconds < 1 || *a.TimeoutSeconds > int(maxTimeout/time.Second) {
			return tool.Errorf("timeout_seconds must be 1 to %d, got %d", int(maxTimeout/time.Second), *a.TimeoutSeconds), nil
		}
		timeout = time.Duration(*a.TimeoutSeconds) * time.Second
	}
	workdir, err := checkWorkdir(c.Workspace, a.Workdir)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	out := newKeeper(headBytes, tailBytes)
	stream := &lockedWriter{w: io.MultiWriter(out, orDiscard(c.Output))}
	start := time.Now()
	exit, err := c.Host.Exec(ctx, sandbox.ExecRequest{
		Argv:    []string{"/bin/sh", "-c", a.Command}, // exactly what the gate judged
		Workdir: workdir,
		Limits:  sandbox.Limits{Timeout: timeout, MaxOutputBytes: maxOutputBytes},
	}, sandbox.IO{Stdout: stream, Stderr: stream})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("shell: %w", ctx.Err())
		}
		return hostFailure(out, err), nil
	}
	if exit.Duration == 0 {
		exit.Duration = time.Since(start)
	}
	return result(out, exit, timeout), nil
}

// checkWorkdir resolves workdir (symlinks followed) and returns it
// workspace-relative, as the kernel expects: "" for the root. It must be
// an existing directory inside the workspace.
func checkWorkdir(workspace, workdir string) (string, error) {
	if workdir == "" {
		return "", nil
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %v", err)
	}
	abs := filepath.Clean(workdir)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if rel, ok := inside(root, abs); !ok || rel == "" {
			return "", fmt.Errorf("workdir %s is outside the workspace", workdir)
		}
		return "", fmt.Errorf("workdir %s does not exist", workdir)
	case err != nil:
		return "", fmt.Errorf("workdir %s: %v", workdir, err)
	}
	rel, ok := inside(root, real)
	if !ok {
		return "", fmt.Errorf("workdir %s is outside the workspace (it resolves to %s)", workdir, real)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workdir %s is not a directory", workdir)
	}
	return rel, nil
}

// inside is abs relative to root ("" for root itself), if it lies there.
func inside(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

// metadata is the Result's Metadata, for surfaces.
type metadata struct {
	ExitCode   int   `json:"exit_code"`
	TimedOut   bool  `json:"timed_out"`
	DurationMS int64 `json:"duration_ms"`
	Truncated  bool  `json:"truncated"`
}

// result is what the model reads: the kept output, then how it ended.
func result(out *keeper, exit sandbox.Exit, timeout time.Duration) tool.Result {
	var b strings.Builder
	text, omitted := out.text()
	if text == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	if exit.OutputTruncated {
		fmt.Fprintf(&b, "[output stopped at %d MiB; the rest was discarded]\n", maxOutputBytes>>20)
	}
	isErr := false
	switch {
	case exit.TimedOut:
		fmt.Fprintf(&b, "timed out after %ds\n", int(timeout/time.Second))
		isErr = true
	case exit.Signal != "":
		fmt.Fprintf(&b, "killed by signal %s\n", exit.Signal)
	}
	if exit.Code == 126 || exit.Code == 127 {
		isErr = true // the command could not run (refused, not found, not executable)
	}
	fmt.Fprintf(&b, "exit code: %d", exit.Code)
	meta, _ := json.Marshal(metadata{ExitCode: exit.Code, TimedOut: exit.TimedOut,
		DurationMS: exit.Duration.Milliseconds(), Truncated: omitted > 0 || exit.OutputTruncated})
	return tool.Result{Content: b.String(), IsError: isErr, Metadata: meta}
}

// hostFailure is the result when the Host could not run the command at all.
func hostFailure(out *keeper, err error) tool.Result {
	text, omitted := out.text()
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	meta, _ := json.Marshal(metadata{ExitCode: -1, Truncated: omitted > 0})
	return tool.Result{Content: fmt.Sprintf("%sthe command could not be run: %v", text, err), IsError: true, Metadata: meta}
}

// lockedWriter serialises writes: stdout and stderr may arrive from
// different goroutines, and both go to one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

var _ tool.Tool = Tool{}
