package shell_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/plugins/tools/shell"
	"github.com/sparrow-cli/sparrow/plugins/tools/shell/shelltest"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// syncBuffer is a call.Output that tests can read while the tool writes.
type syncBuffer struct {
	mu     sync.Mutex
	b      strings.Builder
	writes int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type meta struct {
	ExitCode   int   `json:"exit_code"`
	TimedOut   bool  `json:"timed_out"`
	DurationMS int64 `json:"duration_ms"`
	Truncated  bool  `json:"truncated"`
}

// run invokes the shell tool in ws with host as the kernel's Host.
func run(t *testing.T, ws string, host sandbox.Executor, args string) (tool.Result, string) {
	t.Helper()
	var out syncBuffer
	res, err := shell.Tool{}.Invoke(t.Context(), &tool.Call{
		ID: "call_1", Arguments: json.RawMessage(args), Workspace: ws, Output: &out, Host: host,
	})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return res, out.String()
}

func decodeMeta(t *testing.T, res tool.Result) meta {
	t.Helper()
	var m meta
	if err := json.Unmarshal(res.Metadata, &m); err != nil {
		t.Fatalf("metadata %s: %v", res.Metadata, err)
	}
	return m
}

func TestRunsThroughHost(t *testing.T) {
	ws := t.TempDir()
	host := &shelltest.Executor{Root: ws}
	res, streamed := run(t, ws, host, `{"command":"echo hello; echo oops >&2; exit 3"}`)
	if res.IsError {
		t.Errorf("a non-zero exit is information, not a tool error: %+v", res)
	}
	for _, want := range []string{"hello\n", "oops\n"} {
		if !strings.Contains(res.Content, want) || !strings.Contains(streamed, want) {
			t.Errorf("content %q / streamed %q lack %q", res.Content, streamed, want)
		}
	}
	if !strings.HasSuffix(res.Content, "\nexit code: 3") {
		t.Errorf("content should end with the exit code: %q", res.Content)
	}
	if m := decodeMeta(t, res); m.ExitCode != 3 || m.TimedOut || m.Truncated {
		t.Errorf("metadata %+v", m)
	}
	want := []sandbox.ExecRequest{{
		Argv:   []string{"/bin/sh", "-c", "echo hello; echo oops >&2; exit 3"},
		Limits: sandbox.Limits{Timeout: 120 * time.Second, MaxOutputBytes: 4 << 20},
	}}
	if d := cmp.Diff(want, host.Calls()); d != "" {
		t.Errorf("host requests (-want +got):\n%s", d)
	}
}

func TestNoOutputAndSuccess(t *testing.T) {
	ws := t.TempDir()
	res, _ := run(t, ws, &shelltest.Executor{Root: ws}, `{"command":"true"}`)
	if res.IsError || res.Content != "(no output)\nexit code: 0" {
		t.Errorf("got %+v", res)
	}
}

func TestWorkdir(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	mustMkdir(t, filepath.Join(ws, "sub", "deep"))
	mustWrite(t, filepath.Join(ws, "file"), "x")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(ws)
	cases := []struct {
		workdir, wantRel, wantErr string
	}{
		{workdir: "sub/deep", wantRel: "sub/deep"},
		{workdir: "sub/../sub", wantRel: "sub"},
		{workdir: ".", wantRel: ""},
		{workdir: filepath.Join(ws, "sub"), wantRel: "sub"},
		{workdir: "..", wantErr: "outside the workspace"},
		{workdir: "../" + filepath.Base(outside), wantErr: "outside the workspace"},
		{workdir: "out", wantErr: "outside the workspace (it resolves to"},
		{workdir: "/etc", wantErr: "outside the workspace"},
		{workdir: "nope", wantErr: "workdir nope does not exist"},
		{workdir: "file", wantErr: "is not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.workdir, func(t *testing.T) {
			host := &shelltest.Executor{Root: ws}
			args, _ := json.Marshal(map[string]string{"command": "pwd", "workdir": tc.workdir})
			res, _ := run(t, ws, host, string(args))
			if tc.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Content, tc.wantErr) {
					t.Errorf("want error %q, got %+v", tc.wantErr, res)
				}
				if len(host.Calls()) != 0 {
					t.Errorf("a refused workdir still reached the host")
				}
				return
			}
			if res.IsError {
				t.Fatalf("got %+v", res)
			}
			if got := host.Calls()[0].Workdir; got != tc.wantRel {
				t.Errorf("host workdir %q, want %q", got, tc.wantRel)
			}
			if want := filepath.Join(real, tc.wantRel); !strings.HasPrefix(res.Content, want+"\n") {
				t.Errorf("pwd printed %q, want %s", res.Content, want)
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	cases := map[string]string{
		`{"command":"ls","cwd":"x"}`:                    `unknown field "cwd"`,
		`{}`:                                            "command is required",
		`{"command":"  \n"}`:                            "command is required",
		`{"command":42}`:                                "cannot unmarshal number",
		`{"command":"ls","timeout_seconds":0}`:          "timeout_seconds must be 1 to 1800, got 0",
		`{"command":"ls","timeout_seconds":1801}`:       "timeout_seconds must be 1 to 1800, got 1801",
		`{"command":"ls","timeout_seconds":-5}`:         "got -5",
		`{"command":"ls","timeout_seconds":"soon"}`:     "cannot unmarshal string",
		`{"command":"ls","workdir":"missing/dir/deep"}`: "does not exist",
	}
	for args, want := range cases {
		ws := t.TempDir()
		host := &shelltest.Executor{Root: ws}
		res, _ := run(t, ws, host, args)
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: want error containing %q, got %+v", args, want, res)
		}
		if len(host.Calls()) != 0 {
			t.Errorf("%s: bad arguments reached the host", args)
		}
	}
}

func TestTimeoutIsAnError(t *testing.T) {
	ws := t.TempDir()
	start := time.Now()
	res, _ := run(t, ws, &shelltest.Executor{Root: ws}, `{"command":"echo started; sleep 30","timeout_seconds":1}`)
	if time.Since(start) > 10*time.Second {
		t.Errorf("the timeout did not stop the command")
	}
	if !res.IsError || !strings.Contains(res.Content, "started\n") || !strings.Contains(res.Content, "timed out after 1s\nexit code: 124") {
		t.Errorf("got %+v", res)
	}
	if m := decodeMeta(t, res); !m.TimedOut || m.ExitCode != 124 {
		t.Errorf("metadata %+v", m)
	}
}

func TestCouldNotRunIsAnError(t *testing.T) {
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, "noexec"), "echo hi\n")
	for cmd, code := range map[string]int{"no-such-command-sparrow": 127, "./noexec": 126} {
		res, _ := run(t, ws, &shelltest.Executor{Root: ws}, fmt.Sprintf(`{"command":%q}`, cmd))
		if !res.IsError || !strings.HasSuffix(res.Content, fmt.Sprintf("exit code: %d", code)) {
			t.Errorf("%s: got %+v", cmd, res)
		}
	}
}

func TestKilledBySignal(t *testing.T) {
	ws := t.TempDir()
	res, _ := run(t, ws, &shelltest.Executor{Root: ws}, `{"command":"kill -TERM $$"}`)
	if res.IsError || !strings.HasSuffix(res.Content, "killed by signal TERM\nexit code: 143") {
		t.Errorf("got %+v", res)
	}
}

// refusingHost is a kernel that runs nothing.
type refusingHost struct {
	calls  int
	exit   sandbox.Exit
	stderr string
	err    error
}

func (h *refusingHost) Exec(_ context.Context, _ sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	h.calls++
	if h.stderr != "" {
		fmt.Fprint(sio.Stderr, h.stderr)
	}
	return h.exit, h.err
}

func TestNothingRunsWithoutTheHost(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "marker")
	args := fmt.Sprintf(`{"command":"touch %s"}`, marker)

	// The gate refused: exit 126 with the reason on stderr.
	gate := &refusingHost{exit: sandbox.Exit{Code: 126}, stderr: "sparrow: not run: denied by rule (deny rm)\n"}
	res, _ := run(t, ws, gate, args)
	if !res.IsError || !strings.Contains(res.Content, "sparrow: not run: denied by rule") || gate.calls != 1 {
		t.Errorf("refused: %+v (%d calls)", res, gate.calls)
	}
	// The Host is unreachable: an error result, not a crash.
	broken := &refusingHost{err: errors.New("the kernel granted this call no Host access")}
	res, _ = run(t, ws, broken, args)
	if !res.IsError || !strings.Contains(res.Content, "could not be run: the kernel granted this call no Host access") {
		t.Errorf("no host: %+v", res)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran without the host: %v", err)
	}
}

// The package must not be able to start processes: no os/exec or syscall
// outside tests and the shelltest helper.
func TestNoExecImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{`"os/exec"`, `"syscall"`, `"golang.org/x/sys`} {
			if strings.Contains(string(src), banned) {
				t.Errorf("%s imports %s: the shell tool must run commands only through Host", f, banned)
			}
		}
	}
}

func TestStreamsWhileRunning(t *testing.T) {
	ws := t.TempDir()
	first := make(chan struct{})
	out := &signalWriter{want: "first", seen: first}
	done := make(chan tool.Result, 1)
	go func() {
		res, _ := shell.Tool{}.Invoke(context.Background(), &tool.Call{
			Arguments: json.RawMessage(`{"command":"echo first; sleep 2; echo second"}`),
			Workspace: ws, Output: out, Host: &shelltest.Executor{Root: ws},
		})
		done <- res
	}()
	select {
	case <-first:
	case res := <-done:
		t.Fatalf("output arrived only with the result: %+v", res)
	case <-time.After(10 * time.Second):
		t.Fatal("no output")
	}
	if res := <-done; !strings.Contains(res.Content, "first\nsecond\n") {
		t.Errorf("got %+v", res)
	}
}

// signalWriter closes seen when want is first written.
type signalWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func TestCancelledRunIsAGoError(t *testing.T) {
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := shell.Tool{}.Invoke(ctx, &tool.Call{
		Arguments: json.RawMessage(`{"command":"sleep 30"}`), Workspace: ws, Output: &syncBuffer{}, Host: &shelltest.Executor{Root: ws},
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v", err)
	}
}

func TestSpec(t *testing.T) {
	s := shell.Tool{}.Spec()
	if err := tool.ValidateSpec(s); err != nil {
		t.Fatal(err)
	}
	if s.Risk != tool.RiskExec || !cmp.Equal(s.PathArguments, []string{"workdir"}) || !strings.Contains(s.Description, "exit code") {
		t.Errorf("spec %+v", s)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestLongOutputThroughHost(t *testing.T) {
	ws := t.TempDir()
	// 5 MB of output: the sandbox stops at 4 MiB, the model sees 30 KiB.
	res, streamed := run(t, ws, &shelltest.Executor{Root: ws}, `{"command":"head -c 5000000 /dev/zero | tr '\\0' x; echo; echo done >&2"}`)
	if res.IsError {
		t.Fatalf("got %+v", res)
	}
	omitted := 4<<20 - 30<<10
	want := fmt.Sprintf("\n[… %d bytes omitted …]\n", omitted)
	if !strings.Contains(res.Content, want) || !strings.HasSuffix(res.Content, "[output stopped at 4 MiB; the rest was discarded]\nexit code: 0") {
		t.Errorf("content %d bytes: head %q tail %q", len(res.Content), res.Content[:40], res.Content[len(res.Content)-200:])
	}
	if len(res.Content) > 31<<10 {
		t.Errorf("content is %d bytes", len(res.Content))
	}
	if len(streamed) != 4<<20 {
		t.Errorf("streamed %d bytes, want the 4 MiB the sandbox let through", len(streamed))
	}
	if m := decodeMeta(t, res); !m.Truncated {
		t.Errorf("metadata %+v", m)
	}
}
