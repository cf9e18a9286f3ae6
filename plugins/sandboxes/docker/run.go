package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// signalScript runs in the container as `sh -c signalScript sparrow SIG
// PID`: it sends SIG to the process group PID leads, or to PID alone when
// it leads none (a runtime that does not make exec'd processes session
// leaders).
const signalScript = `kill -s "$1" -- "-$2" 2>/dev/null || kill -s "$1" "$2" 2>/dev/null; exit 0`

const (
	// killGrace is how long a command gets between SIGTERM and SIGKILL on
	// a timeout or cancel.
	killGrace = 2 * time.Second
	// cliGrace is how long the docker CLI gets to return once the command
	// was sent SIGKILL; then the CLI itself is killed.
	cliGrace = 5 * time.Second
	// signalTimeout bounds one `docker exec ... kill`.
	signalTimeout = 10 * time.Second
)

// linuxSignals are the signals a caller may forward, numbered as in the
// container, which is Linux whatever the host is.
var linuxSignals = map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}

// run starts `docker exec argv` and supervises it to the end: it strips
// the wrapper's pid report from stderr, enforces the timeout, forwards
// signals and stops the command on cancel through `docker exec ... kill`,
// and turns how the CLI ended into the command's exit.
func (d *Docker) run(ctx context.Context, s *session, argv []string, mark string, sio sandbox.IO, timeout time.Duration, limit int64) (sandbox.Exit, error) {
	stderr := proc.OrDiscard(sio.Stderr)
	out := &capped{left: limit}
	outLock, errLock := &sync.Mutex{}, &sync.Mutex{}
	if samePointer(sio.Stdout, sio.Stderr) {
		errLock = outLock
	}
	var cliErr tailBuffer
	pids := make(chan int, 1)
	filter := &pidFilter{mark: mark, dst: io.MultiWriter(out.to(stderr, errLock), &cliErr), found: pids}
	cmd := d.command(context.Background(), s.cfg.Docker, argv...)
	cmd.Stdout, cmd.Stderr = out.to(proc.OrDiscard(sio.Stdout), outLock), filter
	stdin, err := newStdin(cmd, sio.Stdin)
	if err != nil {
		return sandbox.Exit{}, err
	}
	began := time.Now()
	err = cmd.Start()
	stdin.started()
	if err != nil {
		stdin.stop()
		if errors.Is(err, exec.ErrNotFound) {
			fmt.Fprintf(stderr, "sparrow: docker: %s\n", fixInstall)
		} else {
			fmt.Fprintf(stderr, "sparrow: docker: start the docker CLI: %v\n", err)
		}
		return sandbox.Exit{Code: sandbox.ExitUnsupported, Duration: time.Since(began)}, nil
	}
	stdin.copy(sio.Stdin)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	v := &supervisor{d: d, s: s, cli: cmd, sent: map[string]bool{}}
	timedOut := v.loop(ctx, waited, pids, sio.Signals, timeout)
	stdin.stop()
	v.signals.Wait()
	filter.flush()

	exit := sandbox.Exit{Duration: time.Since(began), OutputTruncated: out.dropped(), TimedOut: timedOut}
	code := cmd.ProcessState.ExitCode()
	switch {
	case timedOut:
		exit.Code = 124
	case !filter.seen:
		// The wrapper never ran: whatever docker said is about docker.
		exit.Code = sandbox.ExitUnsupported
		if code == 126 {
			exit.Code = 126
		}
		fmt.Fprintf(stderr, "sparrow: docker: %s\n", d.startFailure(ctx, s, code, cliErr.String()))
	case code < 0:
		// The CLI was killed after the command had been sent SIGKILL.
		exit.Code, exit.Signal = 128+linuxSignals["KILL"], "KILL"
	default:
		exit.Code = code
		for name, n := range linuxSignals {
			if code == 128+n && v.sent[name] {
				exit.Signal = name
			}
		}
	}
	return exit, nil
}

// startFailure explains a docker exec that ended before the wrapper ran.
func (d *Docker) startFailure(ctx context.Context, s *session, code int, stderr string) string {
	last := lastLine(stderr)
	low := strings.ToLower(stderr)
	switch {
	case ctx.Err() != nil:
		return "cancelled before the command started; the command was not run"
	case isNoEngine(stderr):
		return noEngine("docker exec failed: " + last)
	case s.stopped() != "":
		return s.stopped()
	case strings.Contains(low, "is not running"), strings.Contains(low, "no such container"):
		return fmt.Sprintf("the container %s is no longer running (%s); this session can run nothing more", s.name, last)
	case strings.Contains(low, `"sh"`) && (strings.Contains(low, "not found") || strings.Contains(low, "no such file")):
		return fmt.Sprintf("the image %s has no sh (%s); use an image with a POSIX shell; the command was not run", s.cfg.Image, last)
	case last != "":
		return fmt.Sprintf("docker exec failed before the command started (exit %d: %s); the command was not run", code, last)
	}
	return fmt.Sprintf("docker exec failed before the command started (exit %d); the command was not run", code)
}

// supervisor delivers timeouts, cancels and forwarded signals to a
// running command. Only loop's goroutine touches its fields; the
// deliveries run beside it and are waited for through signals.
type supervisor struct {
	d   *Docker
	s   *session
	cli *exec.Cmd
	// pid is the command's, once the wrapper reported it; signals for it
	// wait in pending until then.
	pid     int
	pending []string
	// sent are the signals delivered, to name the one that ended it.
	sent     map[string]bool
	termSent bool
	killAt   <-chan time.Time
	// cliKillAt fires when the command was sent SIGKILL and the CLI has
	// still not returned.
	cliKillAt <-chan time.Time
	signals   sync.WaitGroup
}

// loop runs until the docker CLI has been waited for, and reports whether
// the command timed out.
func (v *supervisor) loop(ctx context.Context, waited <-chan error, pids <-chan int, signals <-chan string, timeout time.Duration) (timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	done := ctx.Done()
	for {
		select {
		case <-waited:
			return timedOut
		case v.pid = <-pids:
			pids = nil
			for _, name := range v.pending {
				v.deliver(name)
			}
			v.pending = nil
		case <-timer.C:
			timedOut = true
			v.terminate()
		case <-done:
			done = nil
			v.terminate()
		case <-v.killAt:
			v.killAt = nil
			v.send("KILL")
			v.cliKillAt = time.After(cliGrace)
		case <-v.cliKillAt:
			v.cliKillAt = nil
			killGroup(v.cli.Process)
		case name, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			if _, known := linuxSignals[name]; known {
				v.send(name)
			}
		}
	}
}

// terminate sends SIGTERM once and starts the grace period.
func (v *supervisor) terminate() {
	if v.termSent {
		return
	}
	v.termSent = true
	v.send("TERM")
	v.killAt = time.After(killGrace)
}

// send delivers a signal now, or once the pid is known.
func (v *supervisor) send(name string) {
	if v.pid == 0 {
		v.pending = append(v.pending, name)
		return
	}
	v.deliver(name)
}

// deliver runs `docker exec CONTAINER sh -c signalScript sparrow SIG PID`
// beside the loop.
func (v *supervisor) deliver(name string) {
	v.sent[name] = true
	pid := strconv.Itoa(v.pid)
	v.signals.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
		defer cancel()
		_ = v.d.command(ctx, v.s.cfg.Docker, "exec", v.s.name, "sh", "-c", signalScript, "sparrow", name, pid).Run()
	})
}

// pidFilter passes stderr through, except for its first line when that is
// the wrapper's pid report, which it strips and hands to found. seen says
// the report arrived, so the wrapper ran. It is written by one goroutine
// (os/exec's stderr copier) and read once the CLI has been waited for.
type pidFilter struct {
	mark  string
	dst   io.Writer
	found chan<- int
	buf   []byte
	done  bool
	seen  bool
}

func (f *pidFilter) Write(p []byte) (int, error) {
	if f.done {
		return f.write(p)
	}
	f.buf = append(f.buf, p...)
	i := strings.IndexByte(string(f.buf), '\n')
	if i < 0 {
		if len(f.buf) <= len(f.mark)+20 {
			return len(p), nil
		}
		return len(p), f.flush()
	}
	line := string(f.buf[:i])
	if digits, ok := strings.CutPrefix(line, f.mark); ok {
		if pid, err := strconv.Atoi(digits); err == nil && pid > 0 {
			f.seen = true
			f.found <- pid
			f.buf = f.buf[i+1:]
		}
	}
	return len(p), f.flush()
}

// flush passes on what is held and lets everything after it through.
func (f *pidFilter) flush() error {
	f.done = true
	b := f.buf
	f.buf = nil
	if len(b) == 0 {
		return nil
	}
	_, err := f.write(b)
	return err
}

func (f *pidFilter) write(p []byte) (int, error) {
	if _, err := f.dst.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// capped counts stdout and stderr against one cap and drops what exceeds
// it, reporting success so the command is never stopped by the cap.
type capped struct {
	mu        sync.Mutex
	left      int64
	truncated bool
}

// to writes into dst, serialised by lock (shared when stdout and stderr
// are one writer, so an unsynchronised buffer may serve both; distinct
// writers flow independently).
func (c *capped) to(dst io.Writer, lock *sync.Mutex) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		n := int(min(int64(len(p)), c.left))
		c.left -= int64(n)
		if n < len(p) {
			c.truncated = true
		}
		c.mu.Unlock()
		if n > 0 {
			lock.Lock()
			_, err := dst.Write(p[:n])
			lock.Unlock()
			if err != nil {
				return 0, err
			}
		}
		return len(p), nil
	})
}

func (c *capped) dropped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncated
}

// stdinPipe feeds the caller's stdin to the docker CLI through a pipe; with
// no stdin the CLI runs without -i and the command's stdin is empty.
type stdinPipe struct {
	child, parent *os.File
}

func newStdin(cmd *exec.Cmd, r io.Reader) (*stdinPipe, error) {
	if r == nil {
		return &stdinPipe{}, nil
	}
	cr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("docker: stdin pipe: %w", err)
	}
	cmd.Stdin = cr
	return &stdinPipe{child: cr, parent: pw}, nil
}

// started closes this process's copy of the CLI's end.
func (s *stdinPipe) started() {
	if s.child != nil {
		_ = s.child.Close()
	}
}

// copy streams r into the CLI until r ends (the command then sees EOF) or
// stop closes the pipe. The goroutine cannot be waited for: a caller's
// reader may block for ever. It ends at its next read once stop has run;
// the SDK's server closes its reader when Exec returns.
func (s *stdinPipe) copy(r io.Reader) {
	if s.parent == nil {
		return
	}
	go func() {
		_, _ = io.Copy(s.parent, r)
		_ = s.parent.Close()
	}()
}

// stop closes the pipe, ending a copy blocked on a CLI that no longer
// reads.
func (s *stdinPipe) stop() {
	if s.parent != nil {
		_ = s.parent.Close()
	}
}

// samePointer reports whether a and b are the same pointer. Only pointers
// are compared: comparing other dynamic types can panic.
func samePointer(a, b io.Writer) bool {
	if a == nil || b == nil {
		return false
	}
	t := reflect.TypeOf(a)
	return t.Kind() == reflect.Pointer && t == reflect.TypeOf(b) && a == b
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
