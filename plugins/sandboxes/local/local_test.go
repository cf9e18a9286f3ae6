//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// fakeEnv is the plugin's own environment in tests: the real PATH, and
// variables a command must not see.
func fakeEnv(k string) string {
	switch k {
	case "PATH":
		return os.Getenv("PATH")
	case "HOME":
		return "/home/sparrow"
	case "SECRET_TOKEN", "EDITOR":
		return "leak"
	}
	return ""
}

// prepared returns a backend with a session on a fresh workspace.
func prepared(t *testing.T) (*Local, sandbox.Session) {
	t.Helper()
	l := New()
	l.getenv = fakeEnv
	s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: t.TempDir(), Policy: sandbox.Policy{AllowNetwork: true}})
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

// result is what a test compares of one Exec.
type result struct {
	Code      int
	Signal    string
	TimedOut  bool
	Truncated bool
	Stdout    string
}

// execute runs req to completion with stdin (none when empty) and returns
// the comparable result and stderr.
func execute(t *testing.T, l *Local, req sandbox.ExecRequest, stdin string) (result, string) {
	t.Helper()
	var out, errOut strings.Builder
	sio := sandbox.IO{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		sio.Stdin = strings.NewReader(stdin)
	}
	exit, err := l.Exec(context.Background(), req, sio)
	if err != nil {
		t.Fatalf("exec %q: %v", req.Argv, err)
	}
	if exit.Duration <= 0 && exit.Code != sandbox.ExitUnsupported && exit.Code != 126 && exit.Code != 127 {
		t.Errorf("exec %q: duration not measured: %+v", req.Argv, exit)
	}
	return result{exit.Code, exit.Signal, exit.TimedOut, exit.OutputTruncated, out.String()}, errOut.String()
}

func TestExec(t *testing.T) {
	l, s := prepared(t)
	ws := s.Workdir
	must(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	must(t, os.Symlink("/", filepath.Join(ws, "root")))
	must(t, os.WriteFile(filepath.Join(ws, "noexec"), []byte("#!/bin/sh\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "file"), nil, 0o644))
	type req = sandbox.ExecRequest
	cases := []struct {
		name      string
		req       req
		stdin     string
		want      result
		stderrHas string
	}{
		{name: "stdout, stderr and exit code", req: req{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
			want: result{Code: 3, Stdout: "out\n"}, stderrHas: "err"},
		{name: "argv is not a shell line", req: req{Argv: []string{"echo", "$HOME", "a;b"}}, want: result{Stdout: "$HOME a;b\n"}},
		{name: "stdin", req: req{Argv: []string{"cat"}}, stdin: "ahoy\n", want: result{Stdout: "ahoy\n"}},
		{name: "no stdin is /dev/null", req: req{Argv: []string{"cat"}}},
		{name: "workdir is the session's", req: req{Argv: []string{"pwd"}}, want: result{Stdout: ws + "\n"}},
		{name: "relative workdir", req: req{Argv: []string{"pwd"}, Workdir: "sub"}, want: result{Stdout: filepath.Join(ws, "sub") + "\n"}},
		{name: "absolute workdir inside", req: req{Argv: []string{"pwd"}, Workdir: filepath.Join(ws, "sub")}, want: result{Stdout: filepath.Join(ws, "sub") + "\n"}},
		{name: "relative workdir escape", req: req{Argv: []string{"pwd"}, Workdir: "../.."},
			want: result{Code: 127}, stderrHas: `sparrow: local: workdir "../.." is outside the workspace`},
		{name: "absolute workdir outside", req: req{Argv: []string{"pwd"}, Workdir: "/"}, want: result{Code: 127}, stderrHas: "outside the workspace"},
		{name: "symlinked workdir escape", req: req{Argv: []string{"pwd"}, Workdir: "root/tmp"}, want: result{Code: 127}, stderrHas: "resolves to /tmp, outside the workspace"},
		{name: "missing workdir", req: req{Argv: []string{"pwd"}, Workdir: "nope"}, want: result{Code: 127}, stderrHas: `workdir "nope" does not exist`},
		{name: "workdir is a file", req: req{Argv: []string{"pwd"}, Workdir: "file"}, want: result{Code: 127}, stderrHas: `workdir "file" is not a directory`},
		{name: "command not found", req: req{Argv: []string{"no-such-cmd-xyz", "arg"}},
			want: result{Code: 127}, stderrHas: "sparrow: local: command not found: no-such-cmd-xyz\n"},
		{name: "path not found", req: req{Argv: []string{"./nope"}}, want: result{Code: 127}, stderrHas: "command not found: ./nope"},
		{name: "not executable", req: req{Argv: []string{"./noexec"}}, want: result{Code: 126}, stderrHas: "sparrow: local: permission denied: ./noexec"},
		{name: "a directory", req: req{Argv: []string{"./sub"}}, want: result{Code: 126}, stderrHas: "permission denied: ./sub"},
		{name: "minimal env plus the request's", req: req{Argv: []string{"env"}, Env: map[string]string{"FOO": "bar", "HOME": "/override"}},
			want: result{Stdout: "FOO=bar\nHOME=/override\nPATH=" + os.Getenv("PATH") + "\n"}},
		{name: "request PATH is used to find the command", req: req{Argv: []string{"env"}, Env: map[string]string{"PATH": "/nonexistent"}},
			want: result{Code: 127}, stderrHas: "command not found: env"},
		{name: "bad env name", req: req{Argv: []string{"true"}, Env: map[string]string{"A=B": "c"}}, want: result{Code: 127}, stderrHas: `environment variable "A=B"`},
		{name: "memory limit refused", req: req{Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 1 << 20}},
			want: result{Code: 127}, stderrHas: "sparrow: local: this backend cannot enforce a memory limit; use local-hardened or docker"},
		{name: "pids limit refused", req: req{Argv: []string{"true"}, Limits: sandbox.Limits{MaxPids: 10}}, want: result{Code: 127}, stderrHas: "process count limit"},
		{name: "disk limit refused", req: req{Argv: []string{"true"}, Limits: sandbox.Limits{DiskBytes: 1 << 30}}, want: result{Code: 127}, stderrHas: "disk limit"},
		{name: "cpu limit refused", req: req{Argv: []string{"true"}, Limits: sandbox.Limits{CPUTime: time.Second}}, want: result{Code: 127}, stderrHas: "CPU time limit"},
		{name: "no network is a permission, not a requirement", req: req{Argv: []string{"true"}, AllowNetwork: false}},
		{name: "output cap", req: req{Argv: []string{"printf", "0123456789abc"}, Limits: sandbox.Limits{MaxOutputBytes: 10}},
			want: result{Stdout: "0123456789", Truncated: true}},
		{name: "output cap counts stderr too", req: req{Argv: []string{"sh", "-c", "printf 12345678 >&2; sleep 0.1; printf abcdef"}, Limits: sandbox.Limits{MaxOutputBytes: 10}},
			want: result{Stdout: "ab", Truncated: true}, stderrHas: "12345678"},
		{name: "capped command keeps running", req: req{Argv: []string{"sh", "-c", "head -c 200000 /dev/zero; echo done >&2; exit 5"}, Limits: sandbox.Limits{MaxOutputBytes: 4}},
			want: result{Code: 5, Stdout: "\x00\x00\x00\x00", Truncated: true}},
		{name: "timeout", req: req{Argv: []string{"sleep", "30"}, Limits: sandbox.Limits{Timeout: 100 * time.Millisecond}},
			want: result{Code: 124, TimedOut: true, Signal: "TERM"}},
		{name: "killed by signal", req: req{Argv: []string{"sh", "-c", "kill -USR1 $$"}}, want: result{Code: 128 + int(syscall.SIGUSR1), Signal: "USR1"}},
		{name: "crash", req: req{Argv: []string{"sh", "-c", "kill -SEGV $$"}}, want: result{Code: 128 + int(syscall.SIGSEGV), Signal: "SEGV"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.SessionID = s.ID
			got, stderr := execute(t, l, tc.req, tc.stdin)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s\nstderr: %q", diff, stderr)
			}
			if !strings.Contains(stderr, tc.stderrHas) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.stderrHas)
			}
		})
	}
}

func TestExecWithoutSession(t *testing.T) {
	l := New()
	dir := t.TempDir()
	got, stderr := execute(t, l, sandbox.ExecRequest{Argv: []string{"pwd"}, Workdir: dir}, "")
	if diff := cmp.Diff(result{Stdout: dir + "\n"}, got); diff != "" {
		t.Errorf("absolute workdir (-want +got):\n%s", diff)
	}
	got, stderr = execute(t, l, sandbox.ExecRequest{Argv: []string{"pwd"}, Workdir: "rel"}, "")
	if got.Code != 127 || !strings.Contains(stderr, "must be absolute when no session is given") {
		t.Errorf("relative workdir: %+v %q", got, stderr)
	}
}

func TestExecProtocolErrors(t *testing.T) {
	l, s := prepared(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		req  sandbox.ExecRequest
		want string
	}{
		{"empty argv", context.Background(), sandbox.ExecRequest{SessionID: s.ID}, "local: exec: empty argv"},
		{"unknown session", context.Background(), sandbox.ExecRequest{SessionID: "nope", Argv: []string{"true"}}, `local: exec: no session "nope"`},
		{"context already done", cancelled, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "context canceled"},
	}
	for _, tc := range cases {
		if _, err := l.Exec(tc.ctx, tc.req, sandbox.IO{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
