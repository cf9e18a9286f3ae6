//go:build linux

package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// grandchild is a shell that backgrounds a sleep, reports its pid and
// waits for it.
var grandchild = []string{"sh", "-c", "sleep 100 & echo $!; wait"}

func pidFrom(t *testing.T, out string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	return pid
}

// gone reports whether pid has exited (a zombie counts as exited). It is
// called after Exec returned, so it should be true at once; the short
// retry only absorbs the kernel finishing a SIGKILL's delivery.
func gone(pid int) bool {
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if state, _, ok := proc.ParseStat(stat); ok && state == 'Z' {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone fails the test if pid is still running, killing it so the
// test leaves nothing behind either.
func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	if !gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s: process %d is still running", what, pid)
	}
}

// background runs req in a goroutine with stdout and stderr as pipes the
// test reads, and returns them with the outcome channel.
func background(ctx context.Context, l *Local, req sandbox.ExecRequest, sigs <-chan string) (stdout, stderr *bufio.Reader, done <-chan sandbox.Exit) {
	or, ow := io.Pipe()
	er, ew := io.Pipe()
	ch := make(chan sandbox.Exit, 1)
	go func() {
		exit, err := l.Exec(ctx, req, sandbox.IO{Stdout: ow, Stderr: ew, Signals: sigs})
		if err != nil {
			exit = sandbox.Exit{Code: -1, Signal: err.Error()}
		}
		ow.Close()
		ew.Close()
		ch <- exit
	}()
	return bufio.NewReader(or), bufio.NewReader(er), ch
}

func line(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read line: %v (got %q)", err, s)
	}
	return strings.TrimSuffix(s, "\n")
}

func wait(t *testing.T, done <-chan sandbox.Exit, within time.Duration) sandbox.Exit {
	t.Helper()
	select {
	case exit := <-done:
		return exit
	case <-time.After(within):
		t.Fatalf("command still running after %v", within)
		return sandbox.Exit{}
	}
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	l, s := prepared(t)
	got, _ := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: grandchild, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !got.TimedOut || got.Code != 124 {
		t.Errorf("result %+v, want a timeout with code 124", got)
	}
	assertGone(t, pidFrom(t, got.Stdout), "background child after a timeout")
}

func TestCancelKillsTheWholeTree(t *testing.T) {
	l, s := prepared(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, _, done := background(ctx, l, sandbox.ExecRequest{SessionID: s.ID, Argv: grandchild}, nil)
	pid := pidFrom(t, line(t, stdout))
	go io.Copy(io.Discard, stdout)
	cancel()
	if exit := wait(t, done, 5*time.Second); exit.Signal != "TERM" || exit.Code != 128+int(syscall.SIGTERM) {
		t.Errorf("cancelled command: %+v, want killed by TERM", exit)
	}
	assertGone(t, pid, "background child after cancel")
}

func TestCancelEscalatesToKill(t *testing.T) {
	l, s := prepared(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, _, done := background(ctx, l, sandbox.ExecRequest{SessionID: s.ID,
		Argv: []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.05; done`}}, nil)
	line(t, stdout)
	go io.Copy(io.Discard, stdout)
	var before, after syscall.Rusage
	must(t, syscall.Getrusage(syscall.RUSAGE_SELF, &before))
	start := time.Now()
	cancel()
	exit := wait(t, done, 10*time.Second)
	must(t, syscall.Getrusage(syscall.RUSAGE_SELF, &after))
	if exit.Signal != "KILL" || exit.Code != 137 {
		t.Errorf("exit %+v, want killed by KILL after the grace period", exit)
	}
	if d := time.Since(start); d < proc.KillGrace {
		t.Errorf("KILL after %v, before the %v grace period", d, proc.KillGrace)
	}
	// Waiting out the grace period must not spin.
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	if cpu > proc.KillGrace/4 {
		t.Errorf("used %v of CPU while waiting %v to kill", cpu, proc.KillGrace)
	}
}

func TestExitStopsLeftovers(t *testing.T) {
	l, s := prepared(t)
	start := time.Now()
	got, _ := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep 100 & echo $!"}}, "")
	if d := time.Since(start); d > proc.KillGrace/2 {
		t.Errorf("exec took %v: it waited for a leftover that SIGTERM stops at once", d)
	}
	if got.Code != 0 || got.Signal != "" {
		t.Errorf("the command's own exit is reported, not its leftovers': %+v", got)
	}
	assertGone(t, pidFrom(t, got.Stdout), "background child after exit")
}

func TestLeftoversGetTermBeforeKill(t *testing.T) {
	l, s := prepared(t)
	// The leftover cleans up on TERM and still writes to the command's output.
	got, _ := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c",
		`(trap 'echo cleaned up; exit 0' TERM; while :; do sleep 0.05; done) & sleep 0.2`}}, "")
	if got.Stdout != "cleaned up\n" {
		t.Errorf("stdout %q: the leftover did not get SIGTERM first", got.Stdout)
	}
	// One that ignores TERM is killed when the grace period ends.
	start := time.Now()
	got, _ = execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c",
		`(trap "" TERM; exec sleep 100) & echo $!; sleep 0.3`}}, "") // the pause lets the trap be set
	if d := time.Since(start); d < proc.KillGrace || d > proc.KillGrace+2*time.Second {
		t.Errorf("exec took %v, want the %v grace period", d, proc.KillGrace)
	}
	assertGone(t, pidFrom(t, got.Stdout), "leftover ignoring SIGTERM")
}

func TestEscapedProcessDoesNotHangExec(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	l, s := prepared(t)
	start := time.Now()
	got, stderr := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c",
		`setsid sh -c 'echo $$; exec sleep 30' & sleep 0.3`}}, "")
	pid := pidFrom(t, got.Stdout)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if d := time.Since(start); d > proc.OutputDrain+2*time.Second {
		t.Errorf("exec took %v waiting for a process outside its group", d)
	}
	if !strings.Contains(stderr, "left the command's process group") {
		t.Errorf("stderr %q does not say a process escaped", stderr)
	}
}

func TestSignalsAreForwarded(t *testing.T) {
	l, s := prepared(t)
	sigs := make(chan string, 2)
	stdout, stderr, done := background(context.Background(), l, sandbox.ExecRequest{SessionID: s.ID,
		Argv: []string{"sh", "-c", `trap 'echo got-hup; exit 9' HUP; echo ready >&2; while :; do sleep 0.05; done`}}, sigs)
	line(t, stderr)
	sigs <- "WINCH-OR-WHATEVER" // unknown names are ignored
	sigs <- "HUP"
	if got := line(t, stdout); got != "got-hup" {
		t.Errorf("stdout %q, want the trap's output", got)
	}
	go io.Copy(io.Discard, stdout)
	go io.Copy(io.Discard, stderr)
	if exit := wait(t, done, 5*time.Second); exit.Code != 9 || exit.Signal != "" {
		t.Errorf("exit %+v, want the trap's exit 9", exit)
	}
}

func TestForwardedKill(t *testing.T) {
	l, s := prepared(t)
	sigs := make(chan string, 1)
	stdout, _, done := background(context.Background(), l, sandbox.ExecRequest{SessionID: s.ID, Argv: grandchild}, sigs)
	pid := pidFrom(t, line(t, stdout))
	go io.Copy(io.Discard, stdout)
	sigs <- "KILL"
	close(sigs) // a closed channel is fine too
	if exit := wait(t, done, 5*time.Second); exit.Signal != "KILL" || exit.Code != 137 {
		t.Errorf("exit %+v, want killed by KILL", exit)
	}
	assertGone(t, pid, "group member after a forwarded KILL")
}

func TestStdinStreams(t *testing.T) {
	l, s := prepared(t)
	ir, iw := io.Pipe()
	or, ow := io.Pipe()
	done := make(chan sandbox.Exit, 1)
	go func() {
		exit, _ := l.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID,
			Argv: []string{"sh", "-c", `while read l; do echo "got $l"; done; echo eof`}}, sandbox.IO{Stdin: ir, Stdout: ow})
		ow.Close()
		done <- exit
	}()
	out := bufio.NewReader(or)
	for _, in := range []string{"one", "two"} {
		fmt.Fprintln(iw, in) // the reply must come before more input is sent
		if got := line(t, out); got != "got "+in {
			t.Fatalf("reply %q to %q", got, in)
		}
	}
	iw.Close()
	if got := line(t, out); got != "eof" {
		t.Errorf("after closing stdin: %q", got)
	}
	go io.Copy(io.Discard, out)
	if exit := wait(t, done, 5*time.Second); exit.Code != 0 {
		t.Errorf("exit %+v", exit)
	}
}

func TestStdinNotReadDoesNotBlock(t *testing.T) {
	l, s := prepared(t)
	// An endless stdin the command never reads.
	ir, iw := io.Pipe()
	defer iw.Close()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := iw.Write(buf); err != nil {
				return
			}
		}
	}()
	exit, err := l.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{Stdin: ir})
	if err != nil || exit.Code != 0 {
		t.Errorf("exit %+v, err %v", exit, err)
	}
}

func TestOneWriterForBothStreams(t *testing.T) {
	l, s := prepared(t)
	var both strings.Builder // not safe for concurrent use: Exec must serialise
	exit, err := l.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c",
		`i=0; while [ $i -lt 200 ]; do echo o; echo e >&2; i=$((i+1)); done`}}, sandbox.IO{Stdout: &both, Stderr: &both})
	if err != nil || exit.Code != 0 {
		t.Fatalf("exit %+v, err %v", exit, err)
	}
	if n := len(both.String()); n != 800 {
		t.Errorf("got %d bytes of output, want 800", n)
	}
}
