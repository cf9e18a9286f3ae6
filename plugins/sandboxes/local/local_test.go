package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func prepared(t *testing.T) (*Local, sandbox.Session) {
	t.Helper()
	l := New()
	l.getenv = func(k string) string {
		if k == "SECRET_TOKEN" {
			return "leak"
		}
		return os.Getenv(k)
	}
	s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: t.TempDir(), Policy: sandbox.Policy{AllowNetwork: true}})
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

type result struct {
	exit           sandbox.Exit
	stdout, stderr string
}

func execute(t *testing.T, l *Local, req sandbox.ExecRequest, stdin string) result {
	t.Helper()
	var out, errOut strings.Builder
	sio := sandbox.IO{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		sio.Stdin = strings.NewReader(stdin)
	}
	exit, err := l.Exec(context.Background(), req, sio)
	if err != nil {
		t.Fatal(err)
	}
	return result{exit, out.String(), errOut.String()}
}

func TestExec(t *testing.T) {
	l, s := prepared(t)
	os.Mkdir(filepath.Join(s.Workdir, "sub"), 0o755)
	cases := []struct {
		name       string
		req        sandbox.ExecRequest
		stdin      string
		code       int
		stdout     string
		stderrHas  string
		truncated  bool
		timedOut   bool
		signalName string
	}{
		{name: "output and code", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, code: 3, stdout: "out\n", stderrHas: "err"},
		{name: "stdin", req: sandbox.ExecRequest{Argv: []string{"cat"}}, stdin: "ahoy\n", stdout: "ahoy\n"},
		{name: "no stdin is /dev/null", req: sandbox.ExecRequest{Argv: []string{"cat"}}, stdout: ""},
		{name: "workdir is the session's", req: sandbox.ExecRequest{Argv: []string{"pwd"}}, stdout: s.Workdir + "\n"},
		{name: "relative workdir", req: sandbox.ExecRequest{Argv: []string{"pwd"}, Workdir: "sub"}, stdout: filepath.Join(s.Workdir, "sub") + "\n"},
		{name: "workdir escape", req: sandbox.ExecRequest{Argv: []string{"pwd"}, Workdir: "../.."}, code: 127, stderrHas: "outside the workspace"},
		{name: "not found", req: sandbox.ExecRequest{Argv: []string{"no-such-cmd-xyz"}}, code: 127, stderrHas: "sparrow: local: command not found: no-such-cmd-xyz"},
		{name: "env from request, not the plugin's secrets", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "echo ${FOO}:${SECRET_TOKEN}"}, Env: map[string]string{"FOO": "bar"}}, stdout: "bar:\n"},
		{name: "memory limit refused", req: sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 1 << 20}}, code: 127, stderrHas: "cannot enforce a memory limit; use local-hardened or docker"},
		{name: "pids limit refused", req: sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MaxPids: 10}}, code: 127, stderrHas: "process count"},
		{name: "output cap", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf 0123456789abc"}, Limits: sandbox.Limits{MaxOutputBytes: 10}}, stdout: "0123456789", truncated: true},
		{name: "timeout", req: sandbox.ExecRequest{Argv: []string{"sleep", "30"}, Limits: sandbox.Limits{Timeout: 100 * time.Millisecond}}, code: 124, timedOut: true, signalName: "TERM"},
		{name: "killed by signal", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "kill -USR1 $$"}}, code: 128 + int(syscall.SIGUSR1), signalName: "USR1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.SessionID = s.ID
			r := execute(t, l, tc.req, tc.stdin)
			if r.exit.Code != tc.code || r.stdout != tc.stdout || !strings.Contains(r.stderr, tc.stderrHas) ||
				r.exit.OutputTruncated != tc.truncated || r.exit.TimedOut != tc.timedOut || r.exit.Signal != tc.signalName {
				t.Errorf("got exit %+v stdout %q stderr %q", r.exit, r.stdout, r.stderr)
			}
		})
	}
}

// grandchild starts `sh` that backgrounds a sleep and reports its pid.
var grandchild = []string{"sh", "-c", "sleep 100 & echo $!; wait"}

func pidFrom(t *testing.T, out string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	return pid
}

// gone reports whether pid has exited (a zombie counts), allowing the
// kernel a moment to finish delivering a SIGKILL.
func gone(pid int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if _, rest, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(rest, "Z") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	l, s := prepared(t)
	r := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: grandchild, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !r.exit.TimedOut {
		t.Fatalf("exit %+v", r.exit)
	}
	if pid := pidFrom(t, r.stdout); !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("background child %d survived the timeout", pid)
	}
}

func TestExitKillsBackgroundLeftovers(t *testing.T) {
	l, s := prepared(t)
	start := time.Now()
	r := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep 100 & echo $!"}}, "")
	if time.Since(start) > 5*time.Second {
		t.Fatalf("exec waited for a background child: %v", time.Since(start))
	}
	if pid := pidFrom(t, r.stdout); !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("background child %d outlived its command", pid)
	}
}

func TestCancelKillsTheWholeTree(t *testing.T) {
	l, s := prepared(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	done := make(chan sandbox.Exit, 1)
	go func() {
		exit, _ := l.Exec(ctx, sandbox.ExecRequest{SessionID: s.ID, Argv: grandchild}, sandbox.IO{Stdout: pw})
		pw.Close()
		done <- exit
	}()
	buf := make([]byte, 32)
	n, _ := pr.Read(buf)
	pid := pidFrom(t, string(buf[:n]))
	cancel()
	select {
	case exit := <-done:
		if exit.Signal == "" {
			t.Errorf("cancelled command reports no signal: %+v", exit)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not stop the command")
	}
	if !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("background child %d survived cancel", pid)
	}
}

func TestSignalsAreForwarded(t *testing.T) {
	l, s := prepared(t)
	sigs := make(chan string, 1)
	pr, pw, _ := os.Pipe()
	done := make(chan sandbox.Exit, 1)
	var out strings.Builder
	go func() {
		exit, _ := l.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID,
			Argv: []string{"sh", "-c", `trap 'echo got-hup; exit 9' HUP; echo ready >&2; while :; do sleep 0.05; done`}},
			sandbox.IO{Stdout: &out, Stderr: pw, Signals: sigs})
		pw.Close()
		done <- exit
	}()
	buf := make([]byte, 16)
	pr.Read(buf) // "ready"
	sigs <- "HUP"
	select {
	case exit := <-done:
		if exit.Code != 9 || !strings.Contains(out.String(), "got-hup") {
			t.Fatalf("exit %+v, stdout %q", exit, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("HUP never arrived")
	}
}

func TestPrepareRefusesWhatItCannotEnforce(t *testing.T) {
	l := New()
	ws := t.TempDir()
	cases := []struct {
		name string
		req  sandbox.PrepareRequest
		want string
	}{
		{"relative workspace", sandbox.PrepareRequest{Workspace: "ws", Policy: sandbox.Policy{AllowNetwork: true}}, "not an absolute path"},
		{"missing workspace", sandbox.PrepareRequest{Workspace: filepath.Join(ws, "nope"), Policy: sandbox.Policy{AllowNetwork: true}}, "not a directory"},
		{"read-only paths", sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{AllowNetwork: true, ReadOnlyPaths: []string{"/usr"}}}, "cannot enforce read-only paths"},
		{"no network", sandbox.PrepareRequest{Workspace: ws}, "cannot block network access"},
	}
	for _, tc := range cases {
		if _, err := l.Prepare(context.Background(), tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSessions(t *testing.T) {
	l, s := prepared(t)
	if err := l.Teardown(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Teardown(context.Background(), s.ID); err == nil {
		t.Error("second teardown succeeded")
	}
	r := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if r.exit.Code != 127 || !strings.Contains(r.stderr, "no session") {
		t.Errorf("exec in a torn-down session: %+v %q", r.exit, r.stderr)
	}
}

func TestConfigure(t *testing.T) {
	l := New()
	ok, _ := json.Marshal(map[string]any{"default_timeout": "50ms", "max_output_bytes": 4})
	if err := l.Configure(context.Background(), plugin.Config{Values: ok}); err != nil {
		t.Fatal(err)
	}
	s, _ := l.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: t.TempDir(), Policy: sandbox.Policy{AllowNetwork: true}})
	r := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo 123456; sleep 5"}}, "")
	if !r.exit.TimedOut || r.stdout != "1234" || !r.exit.OutputTruncated {
		t.Errorf("configured defaults not applied: %+v %q", r.exit, r.stdout)
	}
	for _, bad := range []string{`{"default_timeout":"soon"}`, `{"max_output_bytes":0}`} {
		if err := l.Configure(context.Background(), plugin.Config{Values: []byte(bad)}); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestSeedRules(t *testing.T) {
	l := New()
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, ".git"), 0o755)
	s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{
		AllowNetwork: true, DeniedPaths: []string{".git", ".env", "id_rsa"}, EnvAllowlist: []string{"PATH"}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		argv    []string
		workdir string
		denied  string
	}{
		{[]string{"cat", ".env"}, "", ".env"},
		{[]string{"sh", "-c", "cat src/.env | head"}, "", "src/.env"},
		{[]string{"cp", "x", "/root/.ssh/id_rsa"}, "", "/root/.ssh/id_rsa"},
		{[]string{"ls"}, ".git", ".git"},
		{[]string{"echo", "environment"}, "", ""},
		{[]string{"cat", ".envrc"}, "", ""},
	}
	for _, tc := range cases {
		r := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: tc.argv, Workdir: tc.workdir}, "")
		if tc.denied == "" {
			if r.exit.Code == 127 {
				t.Errorf("%v refused: %s", tc.argv, r.stderr)
			}
			continue
		}
		if r.exit.Code != 127 || !strings.Contains(r.stderr, tc.denied+" is a denied path") {
			t.Errorf("%v in %q: exit %d stderr %q", tc.argv, tc.workdir, r.exit.Code, r.stderr)
		}
	}
	// The allowlist clears the environment but for the names it lists.
	r := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo ${HOME:-unset}"}}, "")
	if r.stdout != "unset\n" {
		t.Errorf("HOME leaked past the allowlist: %q", r.stdout)
	}
}
