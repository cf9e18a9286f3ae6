//go:build linux

package singularity

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// background runs req in a goroutine with stdout as a pipe the test
// reads, and returns it with stdin's writer and the outcome channel.
func background(ctx context.Context, f *fixture, req sandbox.ExecRequest, sigs <-chan string) (*bufio.Reader, io.WriteCloser, <-chan sandbox.Exit) {
	or, ow := io.Pipe()
	ir, iw := io.Pipe()
	ch := make(chan sandbox.Exit, 1)
	go func() {
		exit, err := f.b.Exec(ctx, req, sandbox.IO{Stdin: ir, Stdout: ow, Stderr: io.Discard, Signals: sigs})
		if err != nil {
			exit = sandbox.Exit{Code: -1, Signal: err.Error()}
		}
		ow.Close()
		ch <- exit
	}()
	return bufio.NewReader(or), iw, ch
}

func readLine(t *testing.T, r *bufio.Reader) string {
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

// gone reports whether pid has exited (a zombie counts as exited).
func gone(pid int) bool {
	deadline := time.Now().Add(time.Second)
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

func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	if !gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s: process %d is still running", what, pid)
	}
}

func TestStreamingAndInteractiveStdin(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	stdout, stdin, done := background(context.Background(), f, sandbox.ExecRequest{SessionID: s.ID,
		Argv: []string{"sh", "-c", `echo first; read x; echo "got $x"`}}, nil)
	// The first line arrives while the command still waits for input.
	if got := readLine(t, stdout); got != "first" {
		t.Fatalf("first line %q", got)
	}
	fmt.Fprintln(stdin, "answer")
	if got := readLine(t, stdout); got != "got answer" {
		t.Errorf("second line %q", got)
	}
	go io.Copy(io.Discard, stdout)
	if exit := wait(t, done, 5*time.Second); exit.Code != 0 {
		t.Errorf("exit %+v", exit)
	}
}

func TestTimeout(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	began := time.Now()
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep 100 & echo $!; wait"},
		Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !exit.TimedOut || exit.Code != 124 || time.Since(began) > 5*time.Second {
		t.Fatalf("exit %+v after %v", exit, time.Since(began))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	assertGone(t, pid, "the command's child after a timeout")
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, _, done := background(ctx, f, sandbox.ExecRequest{SessionID: s.ID,
		Argv: []string{"sh", "-c", "sleep 100 & echo $!; wait"}}, nil)
	pid, _ := strconv.Atoi(readLine(t, stdout))
	go io.Copy(io.Discard, stdout)
	cancel()
	if exit := wait(t, done, 5*time.Second); exit.Signal != "TERM" || exit.Code != 128+int(syscall.SIGTERM) {
		t.Errorf("cancelled: %+v, want killed by TERM", exit)
	}
	assertGone(t, pid, "the command's child after cancel")
}

func TestCancelEscalatesToKill(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, _, done := background(ctx, f, sandbox.ExecRequest{SessionID: s.ID,
		Argv: []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.05; done`}}, nil)
	readLine(t, stdout)
	go io.Copy(io.Discard, stdout)
	start := time.Now()
	cancel()
	exit := wait(t, done, 10*time.Second)
	if exit.Signal != "KILL" || exit.Code != 137 || time.Since(start) < proc.KillGrace {
		t.Errorf("exit %+v after %v, want KILL after the %v grace period", exit, time.Since(start), proc.KillGrace)
	}
}

// TestSignals forwards signals to the apptainer process, which relays
// them (here the fake is the command itself, exec'd in place).
func TestSignals(t *testing.T) {
	for _, tc := range []struct {
		sig        string
		wantCode   int
		wantSignal string
		wantOut    string
	}{
		{sig: "INT", wantCode: 3, wantOut: "got INT"},
		{sig: "TERM", wantCode: 4, wantOut: "got TERM"},
		{sig: "KILL", wantCode: 137, wantSignal: "KILL"},
	} {
		t.Run(tc.sig, func(t *testing.T) {
			f := newFixture(t)
			s := f.prepare(t, sandbox.Policy{})
			sigs := make(chan string, 1)
			stdout, _, done := background(context.Background(), f, sandbox.ExecRequest{SessionID: s.ID,
				Argv: []string{"sh", "-c", `trap "echo got INT; exit 3" INT; trap "echo got TERM; exit 4" TERM; echo ready; while :; do sleep 0.05; done`}}, sigs)
			readLine(t, stdout)
			sigs <- tc.sig
			rest, _ := io.ReadAll(stdout)
			exit := wait(t, done, 5*time.Second)
			if exit.Code != tc.wantCode || exit.Signal != tc.wantSignal || strings.TrimSpace(string(rest)) != tc.wantOut {
				t.Errorf("exit %+v output %q", exit, rest)
			}
		})
	}
}

func TestLeftoversAreStopped(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep 100 & echo $!"}}, "")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || exit.Code != 0 {
		t.Fatalf("exit %+v out %q", exit, out)
	}
	assertGone(t, pid, "a background child after the command exited")
}

func TestCleanupKillsRunningCommands(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	stdout, _, done := background(context.Background(), f, sandbox.ExecRequest{SessionID: s.ID,
		Argv: []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.05; done`}}, nil)
	readLine(t, stdout)
	go io.Copy(io.Discard, stdout)
	f.b.Cleanup()
	if exit := wait(t, done, 5*time.Second); exit.Signal != "KILL" {
		t.Errorf("exit %+v, want killed", exit)
	}
}
