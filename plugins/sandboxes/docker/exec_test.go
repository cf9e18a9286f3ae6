//go:build linux

package docker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestExecCommandLineAndEnv(t *testing.T) {
	f := newFixture(t)
	t.Setenv("SPARROW_TEST_SECRET", "hunter2")
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TERM", "xterm")
	p := policy()
	p.EnvAllowlist = []string{"LANG", "SPARROW_TEST_SECRET", "DOCKER_HOST", "PATH", "HOME"}
	s := f.prepare(t, p)
	script := `echo "[$SPARROW_TEST_SECRET][$DOCKER_HOST][$LANG][$TERM][$X][$PATH][$(pwd)]"; cat`
	argv := []string{"sh", "-c", script}
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: argv, Workdir: "sub", Env: map[string]string{"X": "1 2"}}, "piped\n")
	want := "[][][C.UTF-8][][1 2][/usr/local/bin:/usr/bin:/bin][" + filepath.Join(f.ws, "sub") + "]\npiped\n"
	if exit.Code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
	execs := f.execs(t)
	if len(execs) != 1 {
		t.Fatalf("exec lines %q", execs)
	}
	wantLine := "docker" + bracket(append([]string{"exec", "-i", "-w", "/workspace/sub", "-e", "LANG=C.UTF-8", "-e", "X=1 2",
		"sparrow-" + s.ID, "sh", "-c", wrapper, "sparrow", markOf(t, execs[0])}, argv...)...)
	if d := cmp.Diff(wantLine, execs[0]); d != "" {
		t.Errorf("exec line (-want +got):\n%s", d)
	}
	if b, err := os.ReadFile(filepath.Join(f.bin, "leak")); err == nil {
		t.Errorf("a host secret reached the docker CLI: %s", b)
	}
	if strings.Contains(strings.Join(f.log(t), "\n"), "hunter2") {
		t.Error("a host secret reached a docker command line")
	}

	// Without stdin there is no -i; an absolute container workdir is kept.
	f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Workdir: "/workspace/sub"}, "")
	execs = f.execs(t)
	if !strings.HasPrefix(execs[1], "docker"+bracket("exec", "-w", "/workspace/sub", "-e", "LANG=C.UTF-8", "sparrow-"+s.ID)) {
		t.Errorf("exec line %q", execs[1])
	}
}

func TestExitCodesAndStreams(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	must(t, os.WriteFile(filepath.Join(f.ws, "noexec.sh"), []byte("#!/bin/sh\n"), 0o644))
	for _, tt := range []struct {
		name           string
		argv           []string
		stdin          string
		code           int
		stdout, stderr string
	}{
		{"success", []string{"sh", "-c", "echo out; echo err >&2"}, "", 0, "out\n", "err\n"},
		{"exit 1", []string{"sh", "-c", "printf x; exit 1"}, "", 1, "x", ""},
		{"exit 42", []string{"sh", "-c", "echo bad >&2; exit 42"}, "", 42, "", "bad\n"},
		{"stdin", []string{"cat"}, "line one\nline two\n", 0, "line one\nline two\n", ""},
		{"no stdin reads EOF", []string{"cat"}, "", 0, "", ""},
		{"stderr without newline", []string{"sh", "-c", "printf e >&2"}, "", 0, "", "e"},
		{"not found", []string{"nosuch-command", "a"}, "", 127, "", "sparrow: docker: command not found: nosuch-command\n"},
		{"not executable", []string{"./noexec.sh"}, "", 126, "", "sparrow: 1: exec: ./noexec.sh: Permission denied\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: tt.argv}, tt.stdin)
			if exit.Code != tt.code || out != tt.stdout || errOut != tt.stderr || exit.TimedOut || exit.Signal != "" {
				t.Errorf("exit %+v stdout %q stderr %q; want %d %q %q", exit, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t)
	f.configure(t, map[string]any{"memory": "64m", "pids_limit": 100})
	s := f.prepare(t, policy())
	before := len(f.execs(t))
	for _, tt := range []struct {
		name string
		req  sandbox.ExecRequest
		want string
	}{
		{"denied argument", sandbox.ExecRequest{Argv: []string{"cat", ".env"}}, ".env is a denied path; the command was not run"},
		{"denied in a script", sandbox.ExecRequest{Argv: []string{"sh", "-c", "cat sub/../.git/config"}}, "sub/../.git/config is a denied path"},
		{"denied workdir", sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: ".git"}, ".git is a denied path"},
		{"workdir escape", sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: "../x"}, `workdir "../x" is outside the workspace /workspace`},
		{"absolute workdir elsewhere", sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: "/etc"}, `workdir "/etc" is outside the workspace`},
		{"missing workdir", sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: "nope"}, `workdir "nope" does not exist`},
		{"file workdir", sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: "a.txt"}, `workdir "a.txt" is not a directory`},
		{"network for one command", sandbox.ExecRequest{Argv: []string{"true"}, AllowNetwork: true}, "started with --network none"},
		{"memory looser than asked", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 32 << 20}}, "the container's (`memory` = \"64m\") is looser"},
		{"pids looser than asked", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MaxPids: 10}}, "the container's (`pids_limit` = 100) is looser"},
		{"CPU time", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{CPUTime: time.Second}}, "cannot enforce a CPU time limit"},
		{"disk", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{DiskBytes: 1 << 20}}, "cannot enforce a disk limit"},
		{"bad env name", sandbox.ExecRequest{Argv: []string{"true"}, Env: map[string]string{"A=B": "1"}}, `environment variable "A=B"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.SessionID = s.ID
			exit, out, errOut := f.exec(t, tt.req, "")
			if exit.Code != 127 || out != "" || !strings.HasPrefix(errOut, "sparrow: docker: ") || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %+v stdout %q stderr %q", exit, out, errOut)
			}
		})
	}
	if n := len(f.execs(t)) - before; n != 0 {
		t.Errorf("%d refused commands reached docker exec", n)
	}
	// Limits the container already enforces, or stricter ones, are honoured.
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 64 << 20, MaxPids: 200}}, "")
	if exit.Code != 0 {
		t.Errorf("limits the container holds: %+v %q", exit, errOut)
	}

	// Without container limits, any memory or process limit is refused.
	g := newFixture(t)
	g.configure(t, map[string]any{"pids_limit": 0})
	s = g.prepare(t, policy())
	for _, l := range []sandbox.Limits{{MemoryBytes: 1 << 30}, {MaxPids: 1 << 20}} {
		exit, _, errOut := g.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Limits: l}, "")
		if exit.Code != 127 || !strings.Contains(errOut, "the container has none") {
			t.Errorf("%+v: %+v %q", l, exit, errOut)
		}
	}
}

func TestOutputCap(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "printf 0123456789; printf abcdef >&2"},
		Limits: sandbox.Limits{MaxOutputBytes: 12}}, "")
	if exit.Code != 0 || !exit.OutputTruncated || len(out)+len(errOut) != 12 || !strings.HasPrefix("0123456789", out) {
		t.Errorf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	began := time.Now()
	pidFile := filepath.Join(f.ws, "child.pid")
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep 30 & echo $! > child.pid; sleep 30"},
		Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !exit.TimedOut || exit.Code != 124 || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v stderr %q after %s", exit, errOut, time.Since(began))
	}
	execs := f.execs(t)
	pid := pidFromLog(t, execs)
	want := "docker" + bracket("exec", "sparrow-"+s.ID, "sh", "-c", signalScript, "sparrow", "TERM", strconv.Itoa(pid))
	if execs[len(execs)-1] != want {
		t.Errorf("signal delivery %q, want %q", execs[len(execs)-1], want)
	}
	assertGone(t, pid, "the command")
	b, err := os.ReadFile(pidFile)
	must(t, err)
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	assertGone(t, child, "its background child")
}

func TestSignalsAndCancel(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	trap := []string{"sh", "-c", `trap 'echo got INT; exit 3' INT; echo ready; while :; do sleep 0.05; done`}
	for _, tt := range []struct {
		name   string
		signal string
		cancel bool
		code   int
		sig    string
		out    string
	}{
		{"INT is forwarded", "INT", false, 3, "", "got INT\n"},
		{"KILL is forwarded", "KILL", false, 137, "KILL", ""},
		{"unknown names are ignored, then TERM", "TERM", false, 143, "TERM", ""},
		{"cancel stops the command", "", true, 143, "TERM", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sigs := make(chan string, 2)
			out, _, done := background(ctx, f.d, sandbox.ExecRequest{SessionID: s.ID, Argv: trap}, sigs)
			if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("first line %q %v", line, err)
			}
			if tt.signal == "TERM" {
				sigs <- "WINCH-UNKNOWN"
			}
			if tt.cancel {
				cancel()
			} else {
				sigs <- tt.signal
			}
			rest := make(chan string, 1)
			go func() { rest <- readAll(out) }()
			select {
			case exit := <-done:
				if got := <-rest; exit.Code != tt.code || exit.Signal != tt.sig || got != tt.out {
					t.Errorf("exit %+v stdout %q", exit, got)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("Exec did not return")
			}
		})
	}
}

func TestStoppedContainer(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	sess := f.d.sessions[s.ID]
	killGroup(sess.run.Process) // the container dies under the session
	<-sess.exited
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "has stopped (docker run: signal: killed)") {
		t.Errorf("exit %+v %q", exit, errOut)
	}
}

func TestDockerExecFailure(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	name := "sparrow-" + s.ID
	for _, tt := range []struct {
		name  string
		setup func()
		want  string
	}{{
		name:  "image without sh",
		setup: func() { must(t, os.WriteFile(filepath.Join(f.bin, "nosh"), nil, 0o644)) },
		want: `OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown` + "\n" +
			`sparrow: docker: the image debian:12-slim has no sh (OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown); use an image with a POSIX shell; the command was not run` + "\n",
	}, {
		// The container is gone though docker run has not noticed yet.
		name: "container gone",
		setup: func() {
			must(t, os.Remove(filepath.Join(f.bin, "nosh")))
			must(t, os.Remove(filepath.Join(f.bin, "run."+name)))
		},
		want: "Error response from daemon: container " + name + " is not running\n" +
			"sparrow: docker: the container " + name + " is no longer running (Error response from daemon: container " + name + " is not running); this session can run nothing more\n",
	}} {
		tt.setup()
		exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
		if exit.Code != 127 || out != "" || errOut != tt.want {
			t.Errorf("%s: exit %+v stdout %q stderr %q", tt.name, exit, out, errOut)
		}
	}
}

func TestDeniedPath(t *testing.T) {
	denied := []string{".git", ".env", "id_*"}
	for _, tt := range []struct {
		workdir string
		argv    []string
		want    string
	}{
		{".", []string{"ls", "src"}, ""},
		{".", []string{"cat", "src/.env"}, "src/.env"},
		{".", []string{"sh", "-c", "cat<.env"}, ".env"},
		{".", []string{"ssh", "-i", "~/.ssh/id_ed25519"}, "~/.ssh/id_ed25519"},
		{"sub/.git/hooks", []string{"ls"}, "sub/.git/hooks"},
		{".", []string{"cat", ".envrc"}, ""},
	} {
		if got := sandbox.DeniedArgument(denied, tt.workdir, tt.argv); got != tt.want {
			t.Errorf("sandbox.DeniedArgument(%q, %q) = %q, want %q", tt.workdir, tt.argv, got, tt.want)
		}
	}
}

// pidFromLog is the command's pid, which the fake docker exec reported
// through the wrapper: the first exec's mark sits in the log, and the pid
// in the signal delivery that followed.
func pidFromLog(t *testing.T, execs []string) int {
	t.Helper()
	last := execs[len(execs)-1]
	f := strings.Fields(last)
	pid, err := strconv.Atoi(strings.Trim(f[len(f)-1], "[]"))
	if err != nil {
		t.Fatalf("no pid in %q", last)
	}
	return pid
}

// assertGone fails the test if pid is still running, killing it so the
// test leaves nothing behind either.
func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s: process %d is still running", what, pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readAll(r interface{ ReadString(byte) (string, error) }) string {
	var b strings.Builder
	for {
		s, err := r.ReadString('\n')
		b.WriteString(s)
		if err != nil {
			return b.String()
		}
	}
}
