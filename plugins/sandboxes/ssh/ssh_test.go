//go:build unix

package ssh

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestRunExitCodesAndStreams(t *testing.T) {
	f := newFixture(t, nil)
	s, _ := f.prepare(t)
	for _, tc := range []struct {
		name, script, stdout, stderr string
		code                         int
	}{
		{"ok", "echo out; echo err >&2", "out\n", "err\n", 0},
		{"seven", "printf x; exit 7", "x", "", 7},
		// The command's own 255 is not ssh failing.
		{"255", "echo last >&2; exit 255", "", "last\n", 255},
		{"not found", "exec nonexistent-sparrow-cmd", "", "", 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", tc.script}}, "")
			if exit.Code != tc.code || out != tc.stdout || exit.TimedOut {
				t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
			}
			if tc.name != "not found" && errOut != tc.stderr {
				t.Errorf("stderr %q, want %q", errOut, tc.stderr)
			}
			if strings.Contains(errOut, "sparrow: ssh") {
				t.Errorf("the backend spoke on a command's own exit: %q", errOut)
			}
		})
	}
}

// signalWriter reports on a channel once the output holds want.
type signalWriter struct {
	syncBuffer
	want string
	seen chan struct{}
}

func newSignalWriter(want string) *signalWriter {
	return &signalWriter{want: want, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		select {
		case <-w.seen:
		default:
			close(w.seen)
		}
	}
	return n, err
}

// execAsync starts Exec in the background.
func (f *fixture) execAsync(ctx context.Context, req sandbox.ExecRequest, sio sandbox.IO) <-chan sandbox.Exit {
	done := make(chan sandbox.Exit, 1)
	go func() {
		exit, err := f.b.Exec(ctx, req, sio)
		if err != nil {
			exit.Code = -1
		}
		done <- exit
	}()
	return done
}

func TestStreamsWhileRunning(t *testing.T) {
	f := newFixture(t, nil)
	s, _ := f.prepare(t)
	out := newSignalWriter("a\n")
	done := f.execAsync(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo a; sleep 2; echo b"}},
		sandbox.IO{Stdout: out})
	select {
	case <-out.seen:
	case exit := <-done:
		t.Fatalf("ended (%+v) before a was seen: output is buffered", exit)
	case <-time.After(30 * time.Second):
		t.Fatal("no output")
	}
	select {
	case exit := <-done:
		t.Fatalf("ended (%+v) right after a: sleep did not run", exit)
	default:
	}
	if exit := <-done; exit.Code != 0 || out.String() != "a\nb\n" {
		t.Fatalf("exit %+v stdout %q", exit, out.String())
	}
}

func TestStdin(t *testing.T) {
	f := newFixture(t, nil)
	s, _ := f.prepare(t)
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "tr a-z A-Z; echo done"}}, "piped\nlines\n")
	if exit.Code != 0 || out != "PIPED\nLINES\ndone\n" {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
	// No stdin: the command reads EOF at once.
	exit, out, _ = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "cat; echo eof"}}, "")
	if exit.Code != 0 || out != "eof\n" {
		t.Fatalf("no stdin: exit %+v stdout %q", exit, out)
	}
}

func TestTimeoutKillsRemoteCommand(t *testing.T) {
	f := newFixture(t, nil)
	s, sess := f.prepare(t)
	began := time.Now()
	secs := uniqueSeconds()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep " + secs + "; echo not-reached"},
		Limits: sandbox.Limits{Timeout: 1500 * time.Millisecond}}, "")
	if !exit.TimedOut || exit.Code != 124 || time.Since(began) > 30*time.Second {
		t.Fatalf("exit %+v stderr %q after %s", exit, errOut, time.Since(began))
	}
	if f.running(t, sess, secs) {
		t.Fatal("the remote sleep survived the timeout")
	}
}

func TestSignalsReachRemoteCommand(t *testing.T) {
	f := newFixture(t, nil)
	s, _ := f.prepare(t)
	for _, tc := range []struct {
		name, script, stdout, signal string
		code                         int
	}{
		{"default action", "echo ready; exec sleep 300", "ready\n", "INT", 130},
		{"trapped", `trap 'echo got-int; exit 3' INT; echo ready; while :; do sleep 0.1; done`, "ready\ngot-int\n", "", 3},
		{"term", "echo ready; exec sleep 300", "ready\n", "TERM", 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := "INT"
			if tc.name == "term" {
				sig = "TERM"
			}
			out := newSignalWriter("ready\n")
			signals := make(chan string, 1)
			done := f.execAsync(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", tc.script}},
				sandbox.IO{Stdout: out, Signals: signals})
			select {
			case <-out.seen:
			case <-time.After(30 * time.Second):
				t.Fatal("never ready")
			}
			signals <- sig
			select {
			case exit := <-done:
				if exit.Code != tc.code || exit.Signal != tc.signal || out.String() != tc.stdout {
					t.Fatalf("exit %+v stdout %q", exit, out.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the signal did not end the command")
			}
		})
	}
}

func TestCancelStopsRemoteCommand(t *testing.T) {
	f := newFixture(t, nil)
	s, sess := f.prepare(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := newSignalWriter("ready\n")
	secs := uniqueSeconds()
	done := f.execAsync(ctx, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo ready; sleep " + secs}}, sandbox.IO{Stdout: out})
	<-out.seen
	cancel()
	select {
	case exit := <-done:
		if exit.Code == 0 || exit.Code == -1 {
			t.Fatalf("exit %+v", exit)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancel did not end the command")
	}
	if f.running(t, sess, secs) {
		t.Fatal("the remote sleep survived cancellation")
	}
}

// uniqueSeconds is a sleep duration no other test, nor a leftover of an
// earlier run, uses: the marker pgrep looks for.
func uniqueSeconds() string {
	return fmt.Sprintf("%d.%06d", 600+rand.IntN(300), rand.IntN(1000000))
}

// running reports whether a `sleep SECONDS` runs on the host, asked
// through a second ssh. pgrep -f matches whole command lines; the bracket
// keeps the shell running pgrep from matching itself.
func (f *fixture) running(t *testing.T, s *session, seconds string) bool {
	t.Helper()
	out, _ := f.ssh(t, s, nil, `pgrep -f 'slee[p] `+seconds+`'; echo "rc=$?"`)
	switch {
	case strings.HasSuffix(out, "rc=0\n"):
		return true
	case strings.HasSuffix(out, "rc=1\n"):
		return false
	}
	t.Fatalf("pgrep: %s", out)
	return false
}

func TestSyncUpAndBack(t *testing.T) {
	f := newFixture(t, nil)
	must(t, os.WriteFile(filepath.Join(f.ws, "gone.txt"), []byte("bye\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	s, sess := f.prepare(t)
	if !strings.HasPrefix(s.Workdir, f.remote+"/") || s.Workdir != sess.ws {
		t.Fatalf("workdir %q not under %s", s.Workdir, f.remote)
	}
	// Up: a file written on the host after Prepare is there too.
	must(t, os.WriteFile(filepath.Join(f.ws, "later.txt"), []byte("later\n"), 0o640))
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "cat a.txt later.txt; ls -A"}}, "")
	if exit.Code != 0 || out != "hello\nlater\na.txt\ngone.txt\nlater.txt\n" {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
	for _, p := range []string{".env", ".git"} {
		if _, err := os.Lstat(filepath.Join(s.Workdir, p)); err == nil {
			t.Errorf("denied path %s was uploaded", p)
		}
	}
	if fi, err := os.Stat(filepath.Join(s.Workdir, "later.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("later.txt remotely: %v %v (want mode 0640 kept)", fi, err)
	}
	// Back: created, changed and deleted remotely; a denied file the
	// command wrote is never written back.
	script := "echo made > made.txt; mkdir -p sub; echo deep > sub/deep.txt; echo changed > a.txt; rm gone.txt; n=.en; echo leaked > ${n}v"
	exit, _, errOut = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", script}}, "")
	if exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	for p, want := range map[string]string{"made.txt": "made\n", "sub/deep.txt": "deep\n", "a.txt": "changed\n", ".env": "KEY=secret\n"} {
		if b, err := os.ReadFile(filepath.Join(f.ws, p)); err != nil || string(b) != want {
			t.Errorf("host %s: %q %v, want %q", p, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(f.ws, "gone.txt")); err == nil {
		t.Error("gone.txt deleted remotely is still on the host")
	}
	if b, err := os.ReadFile(filepath.Join(s.Workdir, ".env")); err != nil || string(b) != "leaked\n" {
		t.Errorf("remote .env %q %v: the test's own premise failed", b, err)
	}
	// The control files stay out of the workspace and are cleaned up.
	if ents, _ := os.ReadDir(sess.ctl); len(ents) != 0 {
		t.Errorf("control files left: %v", ents)
	}
}

func TestDeniedPathsAndWorkdirs(t *testing.T) {
	f := newFixture(t, nil)
	must(t, os.MkdirAll(filepath.Join(f.ws, "sub"), 0o755))
	must(t, os.Symlink("..", filepath.Join(f.ws, "up")))
	s, _ := f.prepare(t)
	marker := filepath.Join(s.Workdir, "ran")
	for _, tc := range []struct {
		name, workdir, stderr string
		argv                  []string
		code                  int
	}{
		{"argv", "", "sparrow: ssh: .env is a denied path; the command was not run\n", []string{"sh", "-c", "touch ran; cat .env"}, 127},
		{"nested argv", "", "sparrow: ssh: sub/.git/config is a denied path; the command was not run\n", []string{"touch", "ran", "sub/.git/config"}, 127},
		{"workdir", ".git", "sparrow: ssh: .git is a denied path; the command was not run\n", []string{"touch", "ran"}, 127},
		{"escape", "../x", `sparrow: ssh: workdir "../x" is outside the workspace ` + s.Workdir + "\n", []string{"touch", "ran"}, 127},
		{"symlink out", "up", "sparrow: ssh: workdir " + s.Workdir + "/up leads out of the workspace copy " + s.Workdir + "\n", []string{"touch", "ran"}, 127},
		{"missing", "nope", "sparrow: ssh: workdir " + s.Workdir + "/nope does not exist on the remote host\n", []string{"touch", "ran"}, 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: tc.argv, Workdir: tc.workdir}, "")
			if exit.Code != tc.code || errOut != tc.stderr {
				t.Fatalf("exit %+v stderr %q, want %q", exit, errOut, tc.stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
	// A relative workdir runs below the copy; an absolute one inside it too.
	for _, wd := range []string{"sub", s.Workdir + "/sub"} {
		exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"pwd"}, Workdir: wd}, "")
		if exit.Code != 0 || out != s.Workdir+"/sub\n" {
			t.Errorf("workdir %q: exit %+v stdout %q stderr %q", wd, exit, out, errOut)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("SPARROW_TEST_SECRET", "hunter2")
	t.Setenv("SSH_AUTH_SOCK", "/tmp/sparrow-agent-hunter3.sock")
	// A user ssh config that sends everything: nothing of the plugin's
	// may arrive anyway (the server accepts every variable).
	cfgFile := filepath.Join(t.TempDir(), "ssh_config")
	must(t, os.WriteFile(cfgFile, []byte("Host *\n  SendEnv *\n  ForwardAgent yes\n"), 0o600))
	f := newFixture(t, map[string]any{"ssh_config": cfgFile})
	s, _ := f.prepare(t)
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"env"}, Env: map[string]string{"REQ_VAR": "from-request"}}, "")
	if exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	for _, leak := range []string{"hunter2", "hunter3", "SSH_AUTH_SOCK", "SSH_CONNECTION", "SSH_CLIENT", "SPARROW_TEST_SECRET"} {
		if strings.Contains(out, leak) {
			t.Errorf("%s reached the command:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "REQ_VAR=from-request\n") || !strings.Contains(out, "PATH=") || !strings.Contains(out, "HOME=") {
		t.Errorf("env:\n%s", out)
	}
	// The remote login's own variables are narrowed to the allowlist.
	s2, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "narrow", Workspace: f.ws,
		Policy: sandbox.Policy{AllowNetwork: true, EnvAllowlist: []string{"PATH"}}})
	must(t, err)
	exit, out, _ = f.exec(t, sandbox.ExecRequest{SessionID: s2.ID, Argv: []string{"env"}}, "")
	if exit.Code != 0 || !strings.HasPrefix(out, "PATH=") || strings.Count(out, "\n") != 1 {
		t.Errorf("allowlist PATH: exit %+v env:\n%s", exit, out)
	}
}

func TestOutputCapAndLimits(t *testing.T) {
	f := newFixture(t, nil)
	s, _ := f.prepare(t)
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "yes | head -c 5000"},
		Limits: sandbox.Limits{MaxOutputBytes: 10}}, "")
	if exit.Code != 0 || !exit.OutputTruncated || out != "y\ny\ny\ny\ny\n" {
		t.Fatalf("exit %+v stdout %q", exit, out)
	}
	for _, l := range []sandbox.Limits{{MemoryBytes: 1 << 20}, {MaxPids: 5}, {CPUTime: time.Second}, {DiskBytes: 1}} {
		exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Limits: l}, "")
		if exit.Code != 127 || !strings.Contains(errOut, "sparrow: ssh: this backend cannot enforce a "+l.ResourceLimit()+" limit") {
			t.Errorf("%+v: exit %+v stderr %q", l, exit, errOut)
		}
	}
}

func TestConnectionReuseAndTeardown(t *testing.T) {
	f := newFixture(t, nil)
	s, sess := f.prepare(t)
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	if fi, err := os.Stat(sess.control); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("no master socket at %s: %v", sess.control, err)
	}
	if out, err := f.ssh(t, sess, []string{"-O", "check"}, ""); err != nil || !strings.Contains(out, "Master running") {
		t.Fatalf("ssh -O check: %v %s", err, out)
	}
	if _, err := os.Stat(sess.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.Teardown(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sess.dir); err == nil {
		t.Errorf("remote session directory %s survived teardown", sess.dir)
	}
	if _, err := os.Stat(f.remote); err != nil {
		t.Errorf("the base directory %s is not this session's and must stay: %v", f.remote, err)
	}
	if out, err := f.ssh(t, sess, []string{"-O", "check"}, ""); err == nil {
		t.Errorf("master still running after teardown: %s", out)
	}
	if _, err := f.b.Teardown(context.Background(), s.ID); err != nil {
		t.Errorf("second teardown: %v", err)
	}
	if _, err := f.b.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{}); err == nil {
		t.Error("exec after teardown succeeded")
	}
}

func TestCleanupReleasesRunningSessions(t *testing.T) {
	f := newFixture(t, nil)
	s, sess := f.prepare(t)
	out := newSignalWriter("ready\n")
	secs := uniqueSeconds()
	done := f.execAsync(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo ready; sleep " + secs}}, sandbox.IO{Stdout: out})
	<-out.seen
	if !f.running(t, sess, secs) {
		t.Fatal("pgrep does not see the running sleep: the checks below would prove nothing")
	}
	f.b.Cleanup()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the command outlived Cleanup")
	}
	if _, err := os.Stat(sess.dir); err == nil {
		t.Errorf("remote session directory survived Cleanup")
	}
	if f.running(t, sess, secs) {
		t.Fatal("the remote sleep survived Cleanup")
	}
}
