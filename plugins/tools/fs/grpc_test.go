package fs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/sparrow-cli/sparrow/plugins/tools/fs"
	"github.com/sparrow-cli/sparrow/plugins/tools/shell"
	"github.com/sparrow-cli/sparrow/plugins/tools/shell/shelltest"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// lockedBuilder is a call.Output safe for the gRPC client's goroutine.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// recordingHost is the kernel's Host handler: it runs commands for one
// token and records every token it is shown.
type recordingHost struct {
	token  string
	runner *shelltest.Executor
	mu     sync.Mutex
	tokens []string
}

func (h *recordingHost) handle(ctx context.Context, tok string, req sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	h.mu.Lock()
	h.tokens = append(h.tokens, tok)
	h.mu.Unlock()
	if tok != h.token {
		return sandbox.Exit{}, errors.New("unknown token")
	}
	return h.runner.Exec(ctx, req, sio)
}

// serve runs what the built-in tools plugin serves over real gRPC and
// returns the tools as the kernel sees them.
func serve(t *testing.T, host *recordingHost) map[string]tool.Tool {
	t.Helper()
	p := &tool.Plugin{
		Tools: append(fs.Tools(), shell.Tool{}),
		Host:  func(s *grpc.Server) { sandbox.RegisterHost(s, host.handle) },
	}
	rpc, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{"tool": p})
	t.Cleanup(func() { rpc.Close() })
	raw, err := rpc.Dispense("tool")
	if err != nil {
		t.Fatal(err)
	}
	client := raw.(*tool.Client)
	if _, err := client.Info(t.Context(), "test"); err != nil { // tells the plugin where Host is
		t.Fatal(err)
	}
	described, err := client.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tool.Tool{}
	for _, tl := range described {
		byName[tl.Spec().Name] = tl
	}
	if len(byName) != 5 {
		t.Fatalf("described %d tools", len(byName))
	}
	return byName
}

// The built-in tools over real gRPC: the file tools answer directly, the
// shell reaches back through the kernel's Host service with the call's
// token.
func TestToolsOverGRPC(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "tok-123"
	host := &recordingHost{token: token, runner: &shelltest.Executor{Root: ws}}
	byName := serve(t, host)

	res, err := byName["read_file"].Invoke(t.Context(), &tool.Call{
		ID: "c1", Arguments: json.RawMessage(`{"path":"hello.txt"}`), Workspace: ws, Output: &lockedBuilder{},
	})
	if err != nil || res.IsError || res.Content != "     1\thello\n     2\tworld\n" {
		t.Errorf("read_file: %+v, %v", res, err)
	}
	res, err = byName["read_file"].Invoke(t.Context(), &tool.Call{
		ID: "c2", Arguments: json.RawMessage(`{"path":"../etc/passwd"}`), Workspace: ws, Output: &lockedBuilder{},
	})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "outside the workspace") {
		t.Errorf("read_file escape: %+v, %v", res, err)
	}

	var out lockedBuilder
	res, err = byName["shell"].Invoke(t.Context(), &tool.Call{
		ID: "c3", Arguments: json.RawMessage(`{"command":"cat hello.txt; echo to-stderr >&2; exit 2"}`),
		Workspace: ws, Output: &out, Token: token,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(res.Content, "hello\nworld\n") || !strings.HasSuffix(res.Content, "exit code: 2") {
		t.Errorf("shell: %+v", res)
	}
	if !strings.Contains(out.String(), "hello\nworld\n") || !strings.Contains(out.String(), "to-stderr") {
		t.Errorf("shell output was not streamed: %q", out.String())
	}
	if !strings.Contains(string(res.Metadata), `"exit_code":2`) {
		t.Errorf("metadata %s", res.Metadata)
	}

	// Without a token the kernel refuses, and the model hears why.
	res, err = byName["shell"].Invoke(t.Context(), &tool.Call{
		ID: "c4", Arguments: json.RawMessage(`{"command":"touch pwned"}`), Workspace: ws, Output: &lockedBuilder{},
	})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no Host access") {
		t.Errorf("shell without token: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); !os.IsNotExist(err) {
		t.Error("a command ran without a Host grant")
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.tokens) != 1 || host.tokens[0] != token {
		t.Errorf("host saw tokens %v", host.tokens)
	}
}
