package ssh

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// killGrace is how long a remote command gets between SIGTERM and
// SIGKILL, and the local ssh after that before it is killed too (a
// connection that hangs).
const killGrace = 2 * time.Second

// run runs the command's ssh to the end and turns how it ended into the
// command's exit. ssh forwards no signals without a terminal, so
// signals, the timeout and cancellation reach the remote command's
// process group through a second ssh (see stopper).
func (b *SSH) run(ctx context.Context, s *session, tag, remote string, sio sandbox.IO, timeout time.Duration, limit int64) sandbox.Exit {
	stderr := proc.OrDiscard(sio.Stderr)
	out := &capped{left: limit}
	var tail tailBuffer
	cmd := b.command(context.Background(), s.cfg, s.control, asClient, nil, remote)
	var errW io.Writer
	cmd.Stdout, errW = out.writers(sio.Stdout, sio.Stderr)
	cmd.Stderr = io.MultiWriter(errW, &tail)
	stdin, err := newStdin(cmd, sio.Stdin)
	if err != nil {
		fmt.Fprintf(stderr, "sparrow: ssh: %v\n", err)
		return sandbox.Exit{Code: sandbox.ExitUnsupported}
	}
	began := time.Now()
	err = cmd.Start()
	stdin.started()
	if err != nil {
		stdin.stop()
		fmt.Fprintf(stderr, "sparrow: ssh: %v; the command was not run\n", b.failure(s.cfg, err, ""))
		return sandbox.Exit{Code: sandbox.ExitUnsupported}
	}
	stdin.copy(sio.Stdin)

	st := &stopper{b: b, s: s, tag: tag}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	timedOut := st.supervise(ctx, waited, sio.Signals, timeout, cmd.Process)
	stdin.stop()
	st.ops.Wait()

	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.dropped()}
	code := cmd.ProcessState.ExitCode()
	switch {
	case code >= 0 && code != exitSSH:
		exit.Code = code
	default:
		// ssh failed, or the command exited 255, or the connection was
		// cut: the wrapper's status file knows which.
		if status, ok := b.status(s, tag); ok {
			exit.Code = status
		} else if st.killed {
			exit.Code, exit.Signal = 128+9, "KILL"
		} else {
			st.send("KILL", true) // it may still run on the host
			st.ops.Wait()
			fmt.Fprintf(stderr, "sparrow: ssh: %v; the command's exit status never arrived\n", b.failure(s.cfg, nil, tail.String()))
			exit.Code = sandbox.ExitUnsupported
		}
	}
	if exit.Signal == "" {
		exit.Signal = st.signalOf(exit.Code)
	}
	if timedOut {
		exit.Code, exit.TimedOut = 124, true
	}
	return exit
}

// stopper delivers signals to a running remote command, each through its
// own short ssh over the session's master, and supervises the stop
// sequence: SIGTERM, SIGKILL after killGrace, then the local ssh.
type stopper struct {
	b   *SSH
	s   *session
	tag string
	ops sync.WaitGroup

	stopping, killed bool
	killAt, hardAt   <-chan time.Time
	// sent are the signals delivered, for naming the one that ended the
	// command.
	sent []string
}

// supervise runs until ssh has exited, and reports whether the command
// timed out.
func (st *stopper) supervise(ctx context.Context, waited <-chan struct{}, signals <-chan string, timeout time.Duration, proc *os.Process) (timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	done := ctx.Done()
	for {
		select {
		case <-waited:
			return timedOut
		case <-timer.C:
			timedOut = true
			st.stop()
		case <-done:
			done = nil
			st.stop()
		case <-st.killAt:
			st.killAt = nil
			st.killed = true
			st.send("KILL", true)
			st.hardAt = time.After(killGrace)
		case <-st.hardAt:
			st.hardAt = nil
			_ = proc.Kill()
		case name, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			if _, known := signalNumber(name); known {
				st.killed = st.killed || name == "KILL"
				st.send(name, false)
			}
		}
	}
}

// stop sends SIGTERM once, marking the command stopped so a wrapper that
// has not started yet gives up, and starts the grace period.
func (st *stopper) stop() {
	if st.stopping {
		return
	}
	st.stopping = true
	st.send("TERM", true)
	st.killAt = time.After(killGrace)
}

// send delivers sig to the command's process group on the host; with
// stop it first leaves the TAG.stop mark.
func (st *stopper) send(sig string, stop bool) {
	st.sent = append(st.sent, sig)
	p := st.s.ctl + "/" + st.tag
	script := `g=$(cat ` + quote(p+".pid") + ` 2>/dev/null) && kill -s ` + sig + ` -- -"$g" 2>/dev/null; :`
	if stop {
		script = ": > " + quote(p+".stop") + "; " + script
	}
	st.ops.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		_ = st.b.remote(ctx, st.s, script, nil, io.Discard)
	})
}

// signalOf names the signal that ended the command when its status is
// 128+N for a signal this backend delivered; "" otherwise.
func (st *stopper) signalOf(code int) string {
	for _, name := range st.sent {
		if n, _ := signalNumber(name); n > 0 && code == 128+n {
			return name
		}
	}
	return ""
}

// status reads the command's status from the wrapper's status file.
func (b *SSH) status(s *session, tag string) (int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var out bytes.Buffer
	if err := b.remote(ctx, s, "cat "+quote(s.ctl+"/"+tag+".status")+" 2>/dev/null; :", nil, &out); err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(out.String()))
	return n, err == nil
}

// signalNumber maps the signal names a caller may forward (sandbox.IO
// Signals) to their numbers where those are the same on every Unix, 0
// for the others; unknown names are not forwarded. The remote kill
// takes the name, so the remote system's own numbering applies.
func signalNumber(name string) (int, bool) {
	switch name {
	case "HUP":
		return 1, true
	case "INT":
		return 2, true
	case "QUIT":
		return 3, true
	case "KILL":
		return 9, true
	case "TERM":
		return 15, true
	case "USR1", "USR2":
		return 0, true
	}
	return 0, false
}

// stdinPipe feeds the caller's stdin to ssh through a pipe, so a caller's
// reader that blocks never keeps Wait from returning; with no stdin ssh
// reads /dev/null (os/exec's default) and the command sees EOF.
type stdinPipe struct {
	child, parent *os.File
}

func newStdin(cmd *exec.Cmd, r io.Reader) (*stdinPipe, error) {
	if r == nil {
		return &stdinPipe{}, nil
	}
	cr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	cmd.Stdin = cr
	return &stdinPipe{child: cr, parent: pw}, nil
}

// started closes this process's copy of ssh's end.
func (s *stdinPipe) started() {
	if s.child != nil {
		_ = s.child.Close()
	}
}

// copy streams r to ssh until r ends (then the command sees EOF) or stop
// closes the pipe. The goroutine cannot be waited for: a caller's reader
// may block for ever; it ends at its next read once stop has run.
func (s *stdinPipe) copy(r io.Reader) {
	if s.parent == nil {
		return
	}
	go func() {
		_, _ = io.Copy(s.parent, r)
		_ = s.parent.Close()
	}()
}

// stop closes the pipe.
func (s *stdinPipe) stop() {
	if s.parent != nil {
		_ = s.parent.Close()
	}
}
