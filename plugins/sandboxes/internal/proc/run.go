//go:build unix

package proc

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

// pollEvery is how often a dying process group is checked.
const pollEvery = 10 * time.Millisecond

// Run starts cmd (whose SysProcAttr must come from Attr) in its own
// process group and supervises it to the end: it forwards signals,
// enforces the timeout, stops the group on cancel, and when the command
// exits it stops whatever the command left running in its group, so
// nothing survives it.
func Run(ctx context.Context, cmd *exec.Cmd, sio sandbox.IO, o Options) (sandbox.Exit, error) {
	p := &localProcess{cmd: cmd, live: o.Live}
	exit, err := supervise(ctx, p, sio, o)
	var nse *NotStartedError
	if errors.As(err, &nse) {
		fmt.Fprintf(OrDiscard(sio.Stderr), "sparrow: %s: %s: %v\n", o.Backend, cmd.Args[0], unwrapExec(nse.Err))
		exit.Code = o.StartFailure
		return exit, nil
	}
	return exit, err
}

// RunProcess supervises a command started by someone else on this
// machine (a session sandbox's server) as Run supervises a local one:
// same output pipes and cap, stdin, timeout (124), cancel, forwarded
// signals and drain of its group. A start failure p reports as a
// *NotStartedError ends with its Code; any other error from Start or
// Wait is returned with the Exit measured so far (output closed), so the
// caller can say what happened. Options.Live, Relay, Deliver and
// StartFailure do not apply.
func RunProcess(ctx context.Context, p Process, sio sandbox.IO, o Options) (sandbox.Exit, error) {
	exit, err := supervise(ctx, p, sio, o)
	var nse *NotStartedError
	if errors.As(err, &nse) {
		exit.Code = nse.Code
		return exit, nil
	}
	return exit, err
}

// supervise runs p to the end; see Run.
func supervise(ctx context.Context, p Process, sio sandbox.IO, o Options) (sandbox.Exit, error) {
	out, err := newOutput(sio.Stdout, sio.Stderr, o.Tap, o.Limit, o.Backend)
	if err != nil {
		return sandbox.Exit{}, err
	}
	stdin, err := newStdin(sio.Stdin, o.Backend)
	if err != nil {
		out.started()
		out.finish()
		return sandbox.Exit{}, err
	}
	began := time.Now()
	err = p.Start(stdin.child, out.stdout(), out.stderr())
	out.started()
	stdin.started()
	if err != nil {
		stdin.stop()
		out.finish()
		return sandbox.Exit{Duration: time.Since(began)}, err
	}
	stdin.copy(sio.Stdin)

	g := &group{p: p, deliver: o.Deliver}
	if lp, ok := p.(*localProcess); ok && o.Relay {
		g.relay = lp.signalLeader
	}
	var res struct {
		ws  syscall.WaitStatus
		err error
	}
	waited := make(chan struct{})
	go func() {
		res.ws, res.err = p.Wait()
		close(waited)
	}()
	timedOut := g.supervise(ctx, waited, sio.Signals, o.Timeout)
	if res.err == nil {
		g.drain()
	}
	p.Stop()
	stdin.stop()
	if out.finish() {
		fmt.Fprintf(OrDiscard(sio.Stderr), "sparrow: %s: a process that left the command's process group still holds its output; it was not waited for\n", o.Backend)
	}
	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.truncated(), TimedOut: timedOut}
	if res.err != nil {
		return exit, res.err
	}
	exit.Code, exit.Signal = status(res.ws)
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

// group is a command's processes as supervise sees them.
type group struct {
	p Process
	// relay, when set, sends a signal to the leader alone (Options.Relay).
	relay   func(syscall.Signal)
	deliver func(syscall.Signal) bool
	// termSent is set once the command was asked to stop; killAt fires
	// when the grace period is over.
	termSent bool
	killAt   <-chan time.Time
	killed   bool
}

// forward sends a forwarded signal or the first SIGTERM: to the leader
// when it relays, else to the group.
func (g *group) forward(sig syscall.Signal) {
	if g.relay != nil {
		g.relay(sig)
		return
	}
	g.p.Signal(sig)
}

// signalGroup sends sig to every process in the group.
func (g *group) signalGroup(sig syscall.Signal) { g.p.Signal(sig) }

// alive reports whether the group still has a live member.
func (g *group) alive() bool { return g.p.Alive() }

// terminate asks the command to stop once and starts the grace period.
func (g *group) terminate(send func(syscall.Signal)) {
	if g.termSent {
		return
	}
	g.termSent = true
	send(syscall.SIGTERM)
	g.killAt = time.After(KillGrace)
}

// kill ends the grace period.
func (g *group) kill() {
	g.killed = true
	g.killAt = nil
	g.signalGroup(syscall.SIGKILL)
}

// supervise runs until the leader has been waited for, and reports
// whether it timed out.
func (g *group) supervise(ctx context.Context, waited <-chan struct{}, signals <-chan string, timeout time.Duration) (timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	done := ctx.Done()
	for {
		select {
		case <-waited:
			return timedOut
		case <-timer.C:
			timedOut = true
			g.terminate(g.forward)
		case <-done:
			done = nil
			g.terminate(g.forward)
		case <-g.killAt:
			g.kill()
		case name, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			switch sig, known := forwardable(name); {
			case !known:
			case g.relay != nil && sig == syscall.SIGKILL:
				g.kill()
			case g.deliver != nil && sig != syscall.SIGKILL && g.deliver(sig):
			default:
				g.forward(sig)
			}
		}
	}
}

// drain stops what the leader left running in its group: SIGTERM, then
// SIGKILL when the grace period (begun here or earlier) is over. Once
// SIGKILL is sent it does not wait: the leftovers are gone, only their
// reaping by init remains. Process.Stop then covers a leftover forked
// while the group was being checked.
func (g *group) drain() {
	if g.killed {
		return
	}
	if g.alive() {
		switch {
		case !g.termSent:
			g.terminate(g.signalGroup)
		case g.relay != nil:
			g.signalGroup(syscall.SIGTERM) // the first went to the leader only
		}
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
}

// stdinPipe feeds the caller's stdin to the command through a pipe; with
// no stdin the command reads /dev/null (os/exec's default).
type stdinPipe struct {
	child, parent *os.File
}

func newStdin(r io.Reader, backend string) (*stdinPipe, error) {
	if r == nil {
		return &stdinPipe{}, nil
	}
	cr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s: stdin pipe: %w", backend, err)
	}
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
