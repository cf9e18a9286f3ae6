package confine

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSession starts a session on a fresh workspace (below /tmp, so
// emptying the sandbox's /tmp must leave it alone) and closes it when the
// test ends.
func startSession(t *testing.T, spec Spec) (*Session, string) {
	t.Helper()
	rep := report(t)
	ws := t.TempDir()
	spec.System = true
	spec.Dir = ws
	spec.ReadWrite = append(spec.ReadWrite, ws)
	s, err := StartSession(spec, rep)
	if err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	t.Cleanup(s.Close)
	return s, ws
}

// runIn runs `sh -c script` in the session and returns its exit status
// and combined output.
func runIn(t *testing.T, s *Session, dir, script string) (syscall.WaitStatus, string) {
	t.Helper()
	ws, out, err := runErr(s, dir, []string{"sh", "-c", script})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return ws, out
}

// startQuiet starts argv in the session with its output discarded.
func startQuiet(t *testing.T, s *Session, dir string, argv ...string) *Process {
	t.Helper()
	p, err := s.Command(argv, dir, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if err := p.Start(nil, null, null); err != nil {
		t.Fatal(err)
	}
	return p
}

func runErr(s *Session, dir string, argv []string) (syscall.WaitStatus, string, error) {
	p, err := s.Command(argv, dir, []string{"PATH=/usr/bin:/bin", "HOME=/home/sandbox"})
	if err != nil {
		return 0, "", err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	err = p.Start(nil, w, w)
	w.Close()
	b, _ := io.ReadAll(r)
	if err != nil {
		return 0, string(b), err
	}
	ws, err := p.Wait()
	p.Stop()
	return ws, string(b), err
}

func TestSessionRunsEachCommandConfined(t *testing.T) {
	s, ws := startSession(t, Spec{Limits: Limits{Pids: 64, MemoryBytes: 256 << 20}})
	st, out := runIn(t, s, ws, `echo out; echo err >&2; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; touch /dev/planted 2>/dev/null || echo landlock-denied; exit 3`)
	if st.ExitStatus() != 3 {
		t.Errorf("exit status %d, want 3 (%s)", st.ExitStatus(), out)
	}
	for _, want := range []string{"out\n", "err\n", "NoNewPrivs:\t1", "Seccomp:\t2", "landlock-denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	pid := s.Pid()
	if pid == 0 {
		t.Fatal("the server's pid is unknown after a command ran")
	}
	// The server holds the control socket and runs threads without
	// Landlock or seccomp: a command must reach neither its descriptors
	// nor its memory (pidfd_open and pidfd_getfd share their numbers on
	// every architecture).
	_, out = runIn(t, s, ws, `
readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fd-link
dd if=/proc/1/mem count=0 2>/dev/null && echo mem-open
cat /proc/1/environ 2>/dev/null | grep -c . || true
perl -e '$p = syscall(434, 1, 0); print "getfd\n" if $p >= 0 && syscall(438, $p, 0, 0) >= 0'`)
	if out != "0\n" {
		t.Errorf("a command reaches into the server: %q", out)
	}
	st, out = runIn(t, s, ws, `kill -KILL 1; kill -TERM 1; echo still-here`)
	if st.ExitStatus() != 0 || !strings.Contains(out, "still-here") || s.Pid() != pid || !s.Usable() {
		t.Errorf("a command could end the server: %v %q usable=%v", st, out, s.Usable())
	}
	if _, out := runIn(t, s, ws, `echo again`); out != "again\n" {
		t.Errorf("second command: %q", out)
	}
}

func TestSessionStartFailures(t *testing.T) {
	s, ws := startSession(t, Spec{})
	os.WriteFile(filepath.Join(ws, "plain"), []byte("echo x"), 0o644)
	for _, tc := range []struct {
		argv []string
		code int
		msg  string
	}{
		{[]string{"no-such-program-xyz"}, 127, "sparrow: command not found: no-such-program-xyz"},
		{[]string{"./plain"}, 126, "sparrow: permission denied: ./plain"},
		{[]string{"./missing"}, 127, "sparrow: command not found: ./missing"},
	} {
		_, out, err := runErr(s, ws, tc.argv)
		var ns *NotStartedError
		if !errors.As(err, &ns) || ns.Code != tc.code || !strings.Contains(out, tc.msg) {
			t.Errorf("%v: err %v, output %q; want exit %d and %q", tc.argv, err, out, tc.code, tc.msg)
		}
	}
	if st, _ := runIn(t, s, ws, "exit 0"); st.ExitStatus() != 0 {
		t.Errorf("the session does not run commands after failed starts: %v", st)
	}
}

func TestSessionLeavesNothingBetweenCommands(t *testing.T) {
	s, ws := startSession(t, Spec{Home: "/home/sandbox"})
	marker := "sparrow-leftover-" + randomName()
	os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("kept"), 0o644)
	_, out := runIn(t, s, ws, `
setsid sh -c 'sleep 1000; echo `+marker+`' >/dev/null 2>&1 &
(sh -c 'sleep 1000; echo `+marker+`' &) >/dev/null 2>&1
echo x > /tmp/left; mkdir -p /tmp/d/e; chmod 000 /tmp/d; echo y > /dev/shm/left; echo z > $HOME/left
echo started`)
	if out != "started\n" {
		t.Fatalf("first command: %q", out)
	}
	if left := hostProcesses(marker); len(left) > 0 {
		t.Errorf("processes outlived the command: %v", left)
	}
	_, out = runIn(t, s, ws, `ls -A /tmp /dev/shm $HOME | grep -v -e : -e '^$' -e "$(basename $(dirname $PWD))"; cat keep.txt`)
	if out != "kept" {
		t.Errorf("second command saw %q, want only the workspace's file", out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "keep.txt")); err != nil || string(b) != "kept" {
		t.Errorf("emptying /tmp touched the workspace below it: %q %v", b, err)
	}
}

// hostProcesses lists the host's processes whose command line holds s.
func hostProcesses(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if st, _, ok := parseStat(stat); ok && st != 'Z' {
				out = append(out, e.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	return out
}

func TestSessionStaleWhenAHiddenFileIsReplaced(t *testing.T) {
	rep := report(t)
	ws := t.TempDir()
	env := filepath.Join(ws, ".env")
	os.WriteFile(env, []byte("old-secret"), 0o600)
	s, err := StartSession(Spec{System: true, Dir: ws, ReadWrite: []string{ws}, Hidden: []string{env}}, rep)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Stale() {
		t.Fatal("a fresh session is stale")
	}
	tmp := env + ".new"
	os.WriteFile(tmp, []byte("new-secret"), 0o600)
	os.Rename(tmp, env)
	if !s.Stale() {
		t.Error("a hidden file replaced on the host does not make the session stale")
	}
}

func TestSessionCloseKillsEverything(t *testing.T) {
	s, ws := startSession(t, Spec{Limits: Limits{Pids: 64}})
	p := startQuiet(t, s, ws, "sleep", "1000")
	pid := s.Pid()
	waited := make(chan error, 1)
	go func() { _, err := p.Wait(); waited <- err }()
	s.Close()
	select {
	case err := <-waited:
		if !errors.Is(err, ErrSessionLost) {
			t.Errorf("wait after close = %v, want ErrSessionLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait hangs after the session closed")
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		t.Errorf("the server (pid %d) outlived Close", pid)
	}
	for _, d := range s.cmd.cg.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s outlived Close", d)
		}
	}
}

func TestSessionWithoutCgroupFallsBackToRlimits(t *testing.T) {
	rep := report(t)
	rep.cgroups = nil
	ws := t.TempDir()
	s, err := StartSession(Spec{System: true, Dir: ws, ReadWrite: []string{ws}, Limits: Limits{MemoryBytes: 3 << 30, FileBytes: 1 << 20}}, rep)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "address space") {
		t.Errorf("notes = %q", s.Notes)
	}
	_, out := runIn(t, s, ws, `ulimit -v; ulimit -f`)
	if out != "3145728\n2048\n" {
		t.Errorf("a command's limits: %q, want the address space and file size limits", out)
	}
	if _, err := StartSession(Spec{System: true, Dir: ws, ReadWrite: []string{ws}, Limits: Limits{CPUTime: time.Minute}}, rep); !errors.Is(err, ErrNotShareable) {
		t.Errorf("a CPU time limit: %v, want ErrNotShareable", err)
	}
}

func TestSessionWedgedServerIsClosed(t *testing.T) {
	s, ws := startSession(t, Spec{})
	runIn(t, s, ws, "true") // the server is up
	s.timeout = 300 * time.Millisecond
	p := startQuiet(t, s, ws, "sleep", "30")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(syscall.Kill(s.Pid(), syscall.SIGSTOP))
	began := time.Now()
	p.Signal(syscall.SIGKILL)
	if _, err := p.Wait(); !errors.Is(err, ErrSessionLost) || time.Since(began) > 5*time.Second {
		t.Errorf("wait on a wedged server: %v after %s", err, time.Since(began))
	}
	if s.Usable() {
		t.Error("a wedged session is still usable")
	}
}
