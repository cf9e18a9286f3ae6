package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Session is one sandbox kept for many commands. It is laid out from a
// Spec exactly as Command lays one out, but its process is a small
// server, pid 1 of the sandbox, that starts each command by fork and exec
// from its confined thread: every command runs under the same
// namespaces, Landlock domain, seccomp filter, no_new_privs, rlimits and
// cgroup as a command started by Command, without paying for bubblewrap
// and the init each time. The server cannot be dumped and that thread
// holds no capabilities, so commands (which have none either, even when
// root runs the sandbox) cannot read or write its memory or take its
// descriptors; as pid 1 it ignores their signals. A command's descriptors are passed to the
// server over a unix socket, so its output never goes through it.
//
// Between commands: the server reaps and, once no command runs, kills
// whatever is left (a daemon that left its process group) and empties
// /tmp, /dev/shm and an empty home. Limits (cgroup, rlimits) bound all
// commands of the session together.
type Session struct {
	// Notes say which fallbacks the sandbox runs under, as Cmd.Notes.
	Notes []string

	cmd   *Cmd
	conn  *net.UnixConn
	spec  Spec
	marks []mark
	// log keeps the end of what bubblewrap and the server said.
	log *tailBuffer

	wmu    sync.Mutex // serialises writes to conn
	mu     sync.Mutex // guards procs
	procs  map[uint64]*Process
	nextID atomic.Uint64
	// dirty is set when the scratch directories could not be emptied.
	dirty atomic.Bool
	// timeout is replyTimeout; tests shorten it.
	timeout time.Duration
	// done is closed once the control socket is gone; waited once
	// bubblewrap has been waited for.
	done, waited chan struct{}
	closeOnce    sync.Once
}

// StartSession starts spec's sandbox with a server in it instead of a
// program (spec.Argv and Dir are not used; the server's working
// directory is spec.Dir, which must be visible). It does not wait for
// the server: the first command's Start does. It refuses with
// ErrNotShareable limits that hold per process.
func StartSession(spec Spec, rep Report) (*Session, error) {
	if !rep.Usable() {
		return nil, fmt.Errorf("cannot confine: missing %s", strings.Join(rep.Missing, "; "))
	}
	if len(spec.ExtraFiles) > 0 {
		return nil, errors.New("confine: a session sandbox takes no extra files")
	}
	if spec.Limits.CPUTime > 0 {
		// RLIMIT_CPU would count the server's own time as well.
		return nil, fmt.Errorf("%w: a CPU time limit holds per process", ErrNotShareable)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("confine: control socket: %w", err)
	}
	local, remote := os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control")
	defer local.Close()
	spec.Argv = nil
	marks := takeMarks(spec)
	c, err := newCmd(spec, rep, remote)
	if err != nil {
		remote.Close()
		return nil, err
	}
	log := &tailBuffer{}
	c.Stdout, c.Stderr = log, log
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = c.Start()
	// bubblewrap has its copies now (or failed): the descriptors that
	// carried the layout are not needed past its start.
	c.closeFiles()
	if err != nil {
		c.Cleanup()
		return nil, fmt.Errorf("confine: start bubblewrap: %w", err)
	}
	fc, err := net.FileConn(local)
	if err != nil {
		c.Kill()
		_ = c.Wait()
		c.Cleanup()
		return nil, fmt.Errorf("confine: control socket: %w", err)
	}
	s := &Session{Notes: c.Notes, cmd: c, conn: fc.(*net.UnixConn), spec: spec, marks: marks, log: log,
		procs: map[uint64]*Process{}, done: make(chan struct{}), waited: make(chan struct{}), timeout: replyTimeout}
	go s.read()
	go func() {
		_ = c.Wait()
		close(s.waited)
	}()
	return s, nil
}

// read routes the server's messages to the commands they are about
// until the socket closes.
func (s *Session) read() {
	defer close(s.done)
	buf := make([]byte, 4096)
	for {
		n, err := s.conn.Read(buf)
		if err != nil || n == 0 {
			return
		}
		var m message
		if json.Unmarshal(buf[:n], &m) != nil {
			return
		}
		s.mu.Lock()
		p := s.procs[m.ID]
		s.mu.Unlock()
		if p == nil {
			continue
		}
		var ch chan message
		switch m.Op {
		case opStarted:
			ch = p.started
		case opExited:
			ch = p.exited
			select {
			case <-p.finished:
			default:
				close(p.finished)
			}
		case opAlive:
			ch = p.alive
		case opEnded:
			ch = p.ended
			if !m.Clean {
				s.dirty.Store(true)
			}
		default:
			continue
		}
		select {
		case ch <- m:
		default:
		}
	}
}

// lost is ErrSessionLost with what the sandbox said last.
func (s *Session) lost() error {
	if msg := strings.TrimSpace(s.log.String()); msg != "" {
		return fmt.Errorf("%w: %s", ErrSessionLost, msg)
	}
	return ErrSessionLost
}

func (s *Session) send(m message, fds ...int) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, _, err := s.conn.WriteMsgUnix(b, oob, nil); err != nil {
		return s.lost()
	}
	return nil
}

// Done is closed once the sandbox is gone.
func (s *Session) Done() <-chan struct{} { return s.done }

// Usable reports whether the sandbox still runs and its scratch
// directories were emptied after every command.
func (s *Session) Usable() bool {
	select {
	case <-s.done:
		return false
	default:
		return !s.dirty.Load()
	}
}

// Stale reports whether a path the sandbox hides, protects or binds is
// no longer what it was when the sandbox was laid out: replaced on the
// host (a bind mount on a replaced file no longer covers it), created,
// removed, or a symlink pointing elsewhere. A stale session must not run
// more commands: a hidden file could be visible.
func (s *Session) Stale() bool { return !equalMarks(takeMarks(s.spec), s.marks) }

// Pid is the host pid of the server, 0 until bubblewrap has said it.
func (s *Session) Pid() int { return int(s.cmd.child.Load()) }

// OOMKills counts the processes the session's memory limit has killed.
func (s *Session) OOMKills() int64 {
	if s.cmd.cg == nil {
		return 0
	}
	return s.cmd.cg.oomKills()
}

// Close kills the sandbox and every process in it, waits for them, and
// removes its cgroup. It is safe to call more than once.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		if pid := s.Pid(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-s.waited:
		case <-time.After(time.Second):
		}
		s.cmd.Kill()
		<-s.waited
		s.conn.Close()
		<-s.done
		s.cmd.Cleanup()
	})
}

// replyTimeout bounds how long the server may take to answer a request,
// and a command to end after SIGKILL: a server that does not is wedged
// (stopped from the host, say), and the session is closed.
const replyTimeout = 30 * time.Second

// await waits for the server's answer on ch; false when the sandbox is
// gone or did not answer in time (it is closed then).
func (s *Session) await(ch <-chan message) (message, bool) {
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		return m, true
	case <-s.done:
	case <-t.C:
		go s.Close()
		<-s.done
	}
	select {
	case m := <-ch:
		return m, true
	default:
		return message{}, false
	}
}

// Process is one command of a session, ready to Start. It implements the
// process interface of the sandbox backends' supervisor.
type Process struct {
	s   *Session
	id  uint64
	req []byte
	// started, exited, alive and ended receive the server's answers;
	// finished is closed once the exit arrived.
	started, exited, alive, ended chan message
	finished                      chan struct{}
	killed                        atomic.Bool
}

// Command prepares argv to run in dir (absolute, visible in the sandbox)
// with exactly env. It refuses a command too large to pass to the server
// (argv and env over 128 KiB); run that one with Command.
func (s *Session) Command(argv []string, dir string, env []string) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("confine: empty argv")
	}
	if !strings.HasPrefix(dir, "/") {
		return nil, fmt.Errorf("confine: working directory %q is not an absolute path", dir)
	}
	id := s.nextID.Add(1)
	b, err := json.Marshal(message{Op: opStart, ID: id, Argv: argv, Dir: dir, Env: env})
	if err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	if len(b) > maxMessage-64 {
		return nil, fmt.Errorf("confine: command and environment take %d bytes, more than a session sandbox passes (%d)", len(b), maxMessage-64)
	}
	return &Process{s: s, id: id, req: b,
		started: make(chan message, 1), exited: make(chan message, 1),
		alive: make(chan message, 1), ended: make(chan message, 1), finished: make(chan struct{})}, nil
}

// Start runs the command on these descriptors (stdin nil: /dev/null) and
// returns once it runs. A command that is not found or not executable
// returns *NotStartedError; a sandbox that is gone, ErrSessionLost.
func (p *Process) Start(stdin, stdout, stderr *os.File) error {
	var m message
	if err := json.Unmarshal(p.req, &m); err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	fds := []int{int(stdout.Fd()), int(stderr.Fd())}
	if stdin != nil {
		m.Stdin = true
		fds = append([]int{int(stdin.Fd())}, fds...)
	}
	p.s.mu.Lock()
	p.s.procs[p.id] = p
	p.s.mu.Unlock()
	if err := p.s.send(m, fds...); err != nil {
		p.forget()
		return err
	}
	r, ok := p.s.await(p.started)
	switch {
	case !ok:
		p.forget()
		return p.s.lost()
	case r.Pid == 0:
		p.forget()
		return &NotStartedError{Code: r.Code}
	}
	return nil
}

// Wait waits for the command's first process to exit.
func (p *Process) Wait() (syscall.WaitStatus, error) {
	select {
	case r := <-p.exited:
		return syscall.WaitStatus(r.Status), nil
	case <-p.s.done:
		select {
		case r := <-p.exited:
			return syscall.WaitStatus(r.Status), nil
		default:
			return 0, p.s.lost()
		}
	}
}

// Signal sends sig to the command's process group. A command that has
// not ended replyTimeout after SIGKILL means a wedged server: the session
// is closed, and Wait returns.
func (p *Process) Signal(sig syscall.Signal) {
	_ = p.s.send(message{Op: opSignal, ID: p.id, Signal: int(sig)})
	if sig == syscall.SIGKILL && p.killed.CompareAndSwap(false, true) {
		go func() {
			t := time.NewTimer(p.s.timeout)
			defer t.Stop()
			select {
			case <-p.finished:
			case <-p.s.done:
			case <-t.C:
				p.s.Close()
			}
		}()
	}
}

// Alive reports whether a process of the command's group still runs.
func (p *Process) Alive() bool {
	if p.s.send(message{Op: opAlive, ID: p.id}) != nil {
		return false
	}
	r, ok := p.s.await(p.alive)
	return ok && r.Alive
}

// Stop ends the command: its group is SIGKILLed if anything of it is
// left, and, when no other command of the session runs, so is every
// other process left in the sandbox, and the scratch directories are
// emptied. It returns once that is done.
func (p *Process) Stop() {
	defer p.forget()
	if p.s.send(message{Op: opEnd, ID: p.id}) == nil {
		p.s.await(p.ended)
	}
}

func (p *Process) forget() {
	p.s.mu.Lock()
	delete(p.s.procs, p.id)
	p.s.mu.Unlock()
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 4096; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
