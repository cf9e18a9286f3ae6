//go:build linux

package localhardened

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// serverPid is the host pid of the current sandbox's server, 0 for none.
func (bs *boxes) serverPid() int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.current == nil {
		return 0
	}
	return bs.current.sb.Pid()
}

// serverPid is the host pid of the session's shared sandbox, 0 for none.
func serverPid(t *testing.T, h *Hardened, s sandbox.Session) int {
	t.Helper()
	sess, ok := h.session(s.ID)
	if !ok {
		t.Fatalf("no session %s", s.ID)
	}
	return sess.boxes.serverPid()
}

// pid1 is what runs as pid 1 of the command's sandbox: the session's
// server, or bubblewrap for a sandbox of the command's own.
const pid1 = `tr '\0' ' ' < /proc/1/cmdline`

func TestSessionCommandsShareOneSandbox(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	_, out1, _ := sh(t, h, s, sandbox.ExecRequest{}, pid1)
	pid := serverPid(t, h, s)
	_, out2, _ := sh(t, h, s, sandbox.ExecRequest{}, pid1)
	if !strings.Contains(out1, "__sparrow-confine-server") || out2 != out1 {
		t.Errorf("pid 1 was %q then %q, want the session's server both times", out1, out2)
	}
	if pid == 0 || serverPid(t, h, s) != pid {
		t.Errorf("server pid %d then %d", pid, serverPid(t, h, s))
	}
}

// TestSessionServerIsSparrowsInit: the init Sparrow hands over serves
// the session (a small binary, not this plugin's), unless it speaks
// another protocol, when the plugin's own binary does.
func TestSessionServerIsSparrowsInit(t *testing.T) {
	self, err := os.Executable()
	must(t, err)
	for _, tc := range []struct{ init, want string }{
		{self, "/.sparrow/init __sparrow-confine-server "},
		{"/bin/true", "/proc/self/fd/"},
		{"", "/proc/self/fd/"},
	} {
		h := New()
		h.getenv = func(k string) string {
			if k == confine.InitEnv {
				return tc.init
			}
			return os.Getenv(k)
		}
		h, s := preparedWith(t, h, sandbox.Policy{})
		exit, out, errOut := sh(t, h, s, sandbox.ExecRequest{}, pid1+"; echo; echo ran")
		if exit.Code != 0 || !strings.HasPrefix(out, tc.want) || !strings.HasSuffix(out, "ran\n") {
			t.Errorf("init %q: pid 1 %q (exit %d, %s), want it to start with %q", tc.init, out, exit.Code, errOut, tc.want)
		}
	}
}

func TestSessionStartsOnlyWithTheFirstCommand(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	if pid := serverPid(t, h, s); pid != 0 {
		t.Errorf("Prepare started a sandbox (pid %d) before any command", pid)
	}
}

func TestSessionNothingOutlivesACommand(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	marker := fmt.Sprintf("sparrow-daemon-%d", time.Now().UnixNano())
	exit, _, errOut := sh(t, h, s, sandbox.ExecRequest{}, `
setsid sh -c 'sleep 1000; echo `+marker+`' >/dev/null 2>&1 &
(setsid sh -c 'sleep 1000; echo `+marker+`' &) >/dev/null 2>&1 </dev/null
echo started`)
	if exit.Code != 0 {
		t.Fatalf("exit %+v: %s", exit, errOut)
	}
	if left := hostProcesses(marker); len(left) > 0 {
		t.Errorf("processes outlived the command: %v", left)
	}
	if strings.Contains(errOut, "still holds its output") {
		t.Errorf("the command's leftovers held its output: %s", errOut)
	}
}

// hostProcesses lists the live host processes whose command line holds s.
func hostProcesses(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); strings.Contains(string(stat), ") Z ") {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

func TestSessionTmpIsEmptiedBetweenCommands(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	exit, _, errOut := sh(t, h, s, sandbox.ExecRequest{}, `echo left > /tmp/left && mkdir -p /tmp/d/e && echo x > /dev/shm/left && ls /tmp/left`)
	if exit.Code != 0 {
		t.Fatalf("exit %+v: %s", exit, errOut)
	}
	// The workspace itself lies below the host's /tmp, bound into the
	// sandbox's: emptying /tmp must not reach it.
	_, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `ls /tmp/left /tmp/d /dev/shm/left 2>&1 | grep -c 'No such file'; cat main.txt`)
	if out != "3\nhello" {
		t.Errorf("second command saw %q, want /tmp and /dev/shm empty and the workspace intact", out)
	}
}

func TestSessionDeniedFileAppearingBetweenCommandsStaysHidden(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	env := filepath.Join(s.Workdir, ".env")
	must(t, os.Remove(env))
	if _, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `cat .env 2>/dev/null || echo none`); out != "none\n" {
		t.Fatalf("first command: %q", out)
	}
	must(t, os.WriteFile(env, []byte("TOKEN=created-between"), 0o600))
	if _, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `echo "[$(cat .env)]"`); out != "[]\n" {
		t.Errorf("a .env created between commands was readable: %q", out)
	}
	// Replaced on the host (an editor's save): the bind mount that hid
	// the old file does not cover the new one.
	must(t, os.WriteFile(env+".tmp", []byte("TOKEN=replaced"), 0o600))
	must(t, os.Rename(env+".tmp", env))
	if _, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `echo "[$(cat .env)]"`); out != "[]\n" {
		t.Errorf("a .env replaced between commands was readable: %q", out)
	}
	// A nested one, whose parent must become a mount point.
	must(t, os.MkdirAll(filepath.Join(s.Workdir, "svc"), 0o755))
	must(t, os.WriteFile(filepath.Join(s.Workdir, "svc", "id_rsa"), []byte("nested-key"), 0o600))
	if _, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `echo "[$(cat svc/id_rsa)]"; mv svc svc2 2>/dev/null && echo moved`); out != "[]\n" {
		t.Errorf("a key created between commands: %q", out)
	}
}

func TestSessionRequestsThatDoNotFitRunInTheirOwnSandbox(t *testing.T) {
	connect := connectScript(hostService(t)) + "; "
	h, s := prepared(t, sandbox.Policy{})
	_, out, _ := sh(t, h, s, sandbox.ExecRequest{}, connect+pid1)
	if !strings.HasPrefix(out, "refused\n") || !strings.Contains(out, "__sparrow-confine-server") {
		t.Fatalf("default command: %q", out)
	}
	pid := serverPid(t, h, s)
	for _, tc := range []struct {
		name string
		req  sandbox.ExecRequest
		want string
	}{
		{"network", sandbox.ExecRequest{AllowNetwork: true}, "host-service\n"},
		{"limits", sandbox.ExecRequest{Limits: sandbox.Limits{MaxPids: 32}}, "refused\n"},
	} {
		_, out, errOut := sh(t, h, s, tc.req, connect+pid1)
		if !strings.HasPrefix(out, tc.want) || strings.Contains(out, "__sparrow-confine-server") || !strings.Contains(out, "bwrap") {
			t.Errorf("%s: %q (stderr %s), want %q from a sandbox of its own", tc.name, out, errOut, tc.want)
		}
	}
	_, out, _ = sh(t, h, s, sandbox.ExecRequest{}, connect+pid1)
	if !strings.HasPrefix(out, "refused\n") || serverPid(t, h, s) != pid {
		t.Errorf("after them, the session's sandbox changed: %q, pid %d then %d", out, pid, serverPid(t, h, s))
	}
}

func TestSessionMemoryLimitReportsPerCommand(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	h.cfg.memory = 96 << 20
	exit, out, errOut := sh(t, h, s, sandbox.ExecRequest{}, `perl -e '$x = "a" x (512*1024*1024); print "allocated\n"'`)
	if exit.Code == 0 || strings.Contains(out, "allocated") || !strings.Contains(errOut, "reached its memory limit (96M)") {
		t.Errorf("exit %+v, stdout %q, stderr %q", exit, out, errOut)
	}
	exit, out, errOut = sh(t, h, s, sandbox.ExecRequest{}, `echo fine`)
	if exit.Code != 0 || out != "fine\n" || strings.Contains(errOut, "memory") {
		t.Errorf("the next command: exit %+v, %q, %q", exit, out, errOut)
	}
}

func TestSessionServerKilledBetweenCommands(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	sh(t, h, s, sandbox.ExecRequest{}, `true`)
	pid := serverPid(t, h, s)
	must(t, syscall.Kill(pid, syscall.SIGKILL))
	exit, out, errOut := sh(t, h, s, sandbox.ExecRequest{}, `echo fine`)
	if exit.Code != 0 || out != "fine\n" {
		t.Errorf("after the server was killed: exit %+v, %q, %q", exit, out, errOut)
	}
	if p := serverPid(t, h, s); p == pid || p == 0 {
		t.Errorf("no new server: pid %d then %d", pid, p)
	}
}

func TestSessionServerKilledUnderACommand(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	sh(t, h, s, sandbox.ExecRequest{}, `true`)
	pid := serverPid(t, h, s)
	go func() {
		time.Sleep(300 * time.Millisecond)
		syscall.Kill(pid, syscall.SIGKILL)
	}()
	exit, _, errOut := sh(t, h, s, sandbox.ExecRequest{Limits: sandbox.Limits{Timeout: 20 * time.Second}}, `sleep 15`)
	if exit.Code != 137 || exit.Signal != "KILL" || exit.Duration > 5*time.Second || !strings.Contains(errOut, "sandbox stopped under the command") {
		t.Errorf("exit %+v, stderr %q", exit, errOut)
	}
	if exit, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `echo fine`); exit.Code != 0 || out != "fine\n" {
		t.Errorf("the next command: %+v %q", exit, out)
	}
}

func TestTeardownStopsTheSessionSandbox(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	sh(t, h, s, sandbox.ExecRequest{}, `true`)
	pid := serverPid(t, h, s)
	if pid == 0 {
		t.Fatal("no server after a command")
	}
	if _, err := h.Teardown(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("the server (pid %d) outlived Teardown", pid)
	}
	h2, s2 := prepared(t, sandbox.Policy{})
	sh(t, h2, s2, sandbox.ExecRequest{}, `true`)
	pid = serverPid(t, h2, s2)
	h2.Cleanup()
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("the server (pid %d) outlived Cleanup", pid)
	}
}

func TestSessionCommandsRunConcurrently(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	var wg sync.WaitGroup
	outs := make([]string, 4)
	for i := range outs {
		wg.Go(func() {
			var out strings.Builder
			exit, err := h.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", fmt.Sprintf("sleep 0.3; echo %d; exit %d", i, i)}}, sandbox.IO{Stdout: &out})
			if err != nil || exit.Code != i {
				t.Errorf("command %d: %+v %v", i, exit, err)
			}
			outs[i] = out.String()
		})
	}
	wg.Wait()
	for i, out := range outs {
		if out != fmt.Sprintf("%d\n", i) {
			t.Errorf("command %d wrote %q", i, out)
		}
	}
}

func TestSessionCommandExits(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	must(t, os.WriteFile(filepath.Join(s.Workdir, "script"), []byte("echo x"), 0o644))
	for _, tc := range []struct {
		argv   []string
		code   int
		signal string
		stderr string
	}{
		{[]string{"no-such-program"}, 127, "", "sparrow: command not found: no-such-program"},
		{[]string{"./script"}, 126, "", "sparrow: permission denied: ./script"},
		{[]string{"sh", "-c", "kill -TERM $$"}, 143, "TERM", ""},
		{[]string{"sh", "-c", "exit 7"}, 7, "", ""},
	} {
		var errOut strings.Builder
		exit, err := h.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: tc.argv}, sandbox.IO{Stderr: &errOut})
		if err != nil || exit.Code != tc.code || exit.Signal != tc.signal || !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("%v: exit %+v %v, stderr %q; want %d %q %q", tc.argv, exit, err, errOut.String(), tc.code, tc.signal, tc.stderr)
		}
	}
	var out strings.Builder
	exit, err := h.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "tr a-z A-Z; pwd"}, Workdir: "sub"},
		sandbox.IO{Stdin: strings.NewReader("from stdin\n"), Stdout: &out})
	if err != nil || exit.Code != 127 {
		t.Errorf("a missing working directory: %+v %v", exit, err)
	}
	must(t, os.Mkdir(filepath.Join(s.Workdir, "sub"), 0o755))
	exit, err = h.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "tr a-z A-Z; pwd"}, Workdir: "sub"},
		sandbox.IO{Stdin: strings.NewReader("from stdin\n"), Stdout: &out})
	if err != nil || exit.Code != 0 || out.String() != "FROM STDIN\n"+filepath.Join(s.Workdir, "sub")+"\n" {
		t.Errorf("stdin and workdir: %+v %v %q", exit, err, out.String())
	}
}

func TestSessionCancelKillsTheCommand(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	exit, err := h.Exec(ctx, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sleep", "30"}}, sandbox.IO{})
	if err != nil || exit.Code == 0 || time.Since(began) > 5*time.Second {
		t.Errorf("cancelled command: %+v %v after %s", exit, err, time.Since(began))
	}
}
