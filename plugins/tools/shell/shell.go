// Package shell is the shell tool. It never runs anything itself: every
// command goes through the kernel's Host service, which gates it and runs
// it in the configured sandbox.
package shell

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed shell.md
var description string

// Output kept for the model: the head and the tail of long output.
const (
	headBytes      = 10 << 10
	tailBytes      = 20 << 10
	defaultTimeout = 120 * time.Second
	maxTimeout     = 1800 * time.Second
	maxOutputBytes = 4 << 20
)

// Tool is the shell tool.
type Tool struct{}

// Spec implements tool.Tool.
func (Tool) Spec() tool.Spec {
	return tool.Spec{Name: "shell", Description: description, Risk: tool.RiskExec, PathArguments: []string{"workdir"},
		InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"},"workdir":{"type":"string"},"timeout_seconds":{"type":"integer","minimum":1,"maximum":1800}},"required":["command"]}`)}
}

// Invoke implements tool.Tool.
func (Tool) Invoke(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Command        string `json:"command"`
		Workdir        string `json:"workdir"`
		TimeoutSeconds int    `json:"timeout_seconds"`
	}
	if err := c.DecodeArguments(&a); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return tool.Errorf("command is empty"), nil
	}
	timeout := defaultTimeout
	if a.TimeoutSeconds > 0 {
		timeout = min(time.Duration(a.TimeoutSeconds)*time.Second, maxTimeout)
	}
	out := &keeper{}
	stream := io.MultiWriter(out, c.Output)
	exit, err := c.Host.Exec(ctx, sandbox.ExecRequest{
		Argv: []string{"/bin/sh", "-c", a.Command}, Workdir: a.Workdir,
		Limits: sandbox.Limits{Timeout: timeout, MaxOutputBytes: maxOutputBytes},
	}, sandbox.IO{Stdout: stream, Stderr: stream})
	if err != nil {
		return tool.Result{}, err
	}
	return result(out, exit, timeout), nil
}

func result(out *keeper, exit sandbox.Exit, timeout time.Duration) tool.Result {
	var b strings.Builder
	b.WriteString(out.String())
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	isErr := false
	switch {
	case exit.TimedOut:
		fmt.Fprintf(&b, "timed out after %s; the command and its children were killed\n", timeout)
		isErr = true
	case exit.Signal != "":
		fmt.Fprintf(&b, "killed by signal %s\n", exit.Signal)
	}
	if exit.Code == 126 || exit.Code == 127 {
		isErr = true
	}
	fmt.Fprintf(&b, "exit code: %d", exit.Code)
	meta, _ := json.Marshal(map[string]any{"exit_code": exit.Code, "timed_out": exit.TimedOut,
		"duration_ms": exit.Duration.Milliseconds(), "truncated": out.omitted > 0 || exit.OutputTruncated})
	return tool.Result{Content: b.String(), IsError: isErr, Metadata: meta}
}

// keeper keeps the first headBytes and the last tailBytes of what is
// written, counting what falls between.
type keeper struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte
	omitted int
}

func (k *keeper) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(p)
	if room := headBytes - len(k.head); room > 0 {
		take := min(room, len(p))
		k.head = append(k.head, p[:take]...)
		p = p[take:]
	}
	k.tail = append(k.tail, p...)
	if over := len(k.tail) - tailBytes; over > 0 {
		k.omitted += over
		k.tail = append(k.tail[:0:0], k.tail[over:]...)
	}
	return n, nil
}

func (k *keeper) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.omitted == 0 {
		return string(k.head) + string(k.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes omitted …]\n%s", k.head, k.omitted, k.tail)
}
