//go:build unix

package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// unavailableReason is empty: Unix has everything this backend needs.
const unavailableReason = ""

// killGrace is how long a process group gets between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// pollEvery is how often a dying process group is checked.
const pollEvery = 10 * time.Millisecond

// run starts cmd in its own process group and supervises it to the end:
// it forwards signals, enforces the timeout, stops the group on cancel,
// and when the command exits it stops whatever the command left running
// in its group, so nothing survives it.
func run(ctx context.Context, cmd *exec.Cmd, sio sandbox.IO, timeout time.Duration, limit int64, live *liveGroups) (sandbox.Exit, error) {
	out, err := newOutput(sio.Stdout, sio.Stderr, limit)
	if err != nil {
		return sandbox.Exit{}, err
	}
	cmd.Stdout, cmd.Stderr = out.stdout(), out.stderr()
	stdin, err := newStdin(cmd, sio.Stdin)
	if err != nil {
		out.started()
		out.finish()
		return sandbox.Exit{}, err
	}
	began := time.Now()
	err = cmd.Start()
	out.started()
	stdin.started()
	if err != nil {
		stdin.stop()
		out.finish()
		fmt.Fprintf(orDiscard(sio.Stderr), "sparrow: local: %s: %v\n", cmd.Args[0], unwrapExec(err))
		return sandbox.Exit{Code: 126, Duration: time.Since(began)}, nil
	}
	stdin.copy(sio.Stdin)

	g := &group{pgid: cmd.Process.Pid}
	live.add(g.pgid)
	defer live.remove(g.pgid)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timedOut := g.supervise(ctx, waited, sio.Signals, timeout)
	g.drain()
	stdin.stop()
	cut := out.finish()
	if cut {
		fmt.Fprintln(orDiscard(sio.Stderr), "sparrow: local: a process that left the command's process group still holds its output; it was not waited for")
	}
	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.truncated(), TimedOut: timedOut}
	exit.Code, exit.Signal = status(cmd.ProcessState)
	if timedOut {
		exit.Code = 124
	}
	return exit, nil
}

// unwrapExec drops os/exec's "fork/exec PATH:" prefix; the caller names
// the command.
func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// group is a command's process group, named by its leader's pid.
type group struct {
	pgid int
	// termSent is set once the group was asked to stop; killAt fires when
	// the grace period is over.
	termSent bool
	killAt   <-chan time.Time
	killed   bool
}

func (g *group) signal(sig syscall.Signal) { _ = syscall.Kill(-g.pgid, sig) }

// alive reports whether the group still has a live member.
func (g *group) alive() bool { return groupAlive(g.pgid) }

// terminate sends SIGTERM once and starts the grace period.
func (g *group) terminate() {
	if g.termSent {
		return
	}
	g.termSent = true
	g.signal(syscall.SIGTERM)
	g.killAt = time.After(killGrace)
}

// kill ends the grace period.
func (g *group) kill() {
	g.killed = true
	g.killAt = nil
	g.signal(syscall.SIGKILL)
}

// supervise runs until the leader has been waited for, and reports
// whether it timed out.
func (g *group) supervise(ctx context.Context, waited <-chan error, signals <-chan string, timeout time.Duration) (timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	done := ctx.Done()
	for {
		select {
		case <-waited:
			return timedOut
		case <-timer.C:
			timedOut = true
			g.terminate()
		case <-done:
			done = nil
			g.terminate()
		case <-g.killAt:
			g.kill()
		case name, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			if sig, known := forwardable(name); known {
				g.signal(sig)
			}
		}
	}
}

// drain stops what the leader left running in its group: SIGTERM, then
// SIGKILL when the grace period (begun here or earlier) is over. Once
// SIGKILL is sent it does not wait: the leftovers are gone, only their
// reaping by init remains. A last SIGKILL, sent only while the group still
// exists (so its id cannot have been reused), covers a leftover forked
// while the group was being checked.
func (g *group) drain() {
	if g.killed {
		return
	}
	if g.alive() {
		g.terminate()
		poll := time.NewTicker(pollEvery)
		defer poll.Stop()
		for g.alive() {
			select {
			case <-poll.C:
			case <-g.killAt:
				g.kill()
				return
			}
		}
	}
	if syscall.Kill(-g.pgid, 0) == nil {
		g.signal(syscall.SIGKILL)
	}
}

// stdinPipe feeds the caller's stdin to the command through a pipe; with
// no stdin the command reads /dev/null (os/exec's default).
type stdinPipe struct {
	child, parent *os.File
}

func newStdin(cmd *exec.Cmd, r io.Reader) (*stdinPipe, error) {
	if r == nil {
		return &stdinPipe{}, nil
	}
	cr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("local: stdin pipe: %w", err)
	}
	cmd.Stdin = cr
	return &stdinPipe{child: cr, parent: pw}, nil
}

// started closes this process's copy of the command's end.
func (s *stdinPipe) started() {
	if s.child != nil {
		_ = s.child.Close()
	}
}

// copy streams r into the command until r ends (then the command sees
// EOF) or stop closes the pipe. The goroutine cannot be waited for: a
// caller's reader may block for ever. It ends at its next read once stop
// has run; the SDK's server closes its reader when Exec returns.
func (s *stdinPipe) copy(r io.Reader) {
	if s.parent == nil {
		return
	}
	go func() {
		_, _ = io.Copy(s.parent, r)
		_ = s.parent.Close()
	}()
}

// stop closes the pipe, ending a copy blocked on a command that no longer
// reads.
func (s *stdinPipe) stop() {
	if s.parent != nil {
		_ = s.parent.Close()
	}
}
