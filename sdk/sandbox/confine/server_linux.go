package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// server is a session sandbox's process: pid 1 of the sandbox, its main
// thread confined as a per-command init would be. It starts each command
// from that thread, reaps everything, and reports exits to the plugin.
type server struct {
	conn *net.UnixConn
	wmu  sync.Mutex // serialises writes to conn

	mu    sync.Mutex // guards cmds and byPid
	cmds  map[uint64]*serverCmd
	byPid map[int]*serverCmd

	// forks are served by the confined thread; children wakes the reaper
	// once there is a child again.
	forks    chan forkRequest
	children chan struct{}
	devNull  int
	scratch  []string
	self     int
}

// serverCmd is one running command: its first process leads a new
// session and process group.
type serverCmd struct {
	id     uint64
	pid    int
	exited bool
}

type forkRequest struct {
	id    uint64
	path  string
	m     message
	files []uintptr
	done  chan forkResult
}

type forkResult struct {
	pid int
	err error
}

// runServer confines this thread, then serves the control socket until
// the plugin closes it; it never returns on success. As pid 1 of the
// sandbox, its exit ends every process in it.
func runServer(args []string) error {
	if len(args) != 1 {
		return errors.New("server: want one plan argument")
	}
	var plan initPlan
	if err := json.Unmarshal([]byte(args[0]), &plan); err != nil {
		return fmt.Errorf("server: plan: %w", err)
	}
	if plan.Control < 3 {
		return errors.New("server: no control socket")
	}
	if err := confineThread(plan); err != nil {
		return err
	}
	// Commands run under the same uid: a process that cannot be dumped
	// cannot have its memory read or written (/proc/1/mem) or its
	// descriptors taken (pidfd_getfd) by processes without
	// CAP_SYS_PTRACE, and this thread, which starts them, has none.
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("server: not dumpable: %w", err)
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("server: close inherited descriptors: %w", err)
	}
	f := os.NewFile(uintptr(plan.Control), "control")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("server: control socket: %w", err)
	}
	conn, ok := fc.(*net.UnixConn)
	if !ok {
		return errors.New("server: control is not a unix socket")
	}
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("server: %s: %w", os.DevNull, err)
	}
	// Signals a command sends to pid 1 are dropped by the kernel unless
	// there is a handler; Go's would end the server, so take them all.
	signal.Notify(make(chan os.Signal, 1))
	s := &server{conn: conn, cmds: map[uint64]*serverCmd{}, byPid: map[int]*serverCmd{},
		forks: make(chan forkRequest), children: make(chan struct{}, 1),
		devNull: null, scratch: plan.Scratch, self: os.Getpid()}
	go s.reap()
	go s.serve()
	s.forkLoop()
	return nil
}

// forkLoop starts commands on the confined thread (the calling goroutine
// is locked to it): fork copies this thread's Landlock domain, seccomp
// filter and no_new_privs to the child.
func (s *server) forkLoop() {
	for r := range s.forks {
		s.mu.Lock()
		pid, err := syscall.ForkExec(r.path, r.m.Argv, &syscall.ProcAttr{
			Dir: r.m.Dir, Env: r.m.Env, Files: r.files,
			Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
		})
		if err == nil {
			c := &serverCmd{id: r.id, pid: pid}
			s.cmds[r.id], s.byPid[pid] = c, c
			select {
			case s.children <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
		r.done <- forkResult{pid, err}
	}
}

// reap waits for every child, commands and the orphans they leave (which
// re-parent to pid 1), and reports the exit of each command's first
// process.
func (s *server) reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			<-s.children
			continue
		}
		s.mu.Lock()
		c := s.byPid[pid]
		if c != nil {
			delete(s.byPid, pid)
			c.exited = true
		}
		s.mu.Unlock()
		if c != nil {
			s.send(message{Op: opExited, ID: c.id, Status: uint32(ws)})
		}
	}
}

// serve handles the plugin's requests in order; it exits the process
// (and so the sandbox) when the plugin closes the socket.
func (s *server) serve() {
	buf := make([]byte, maxMessage)
	oob := make([]byte, unix.CmsgSpace(3*4))
	for {
		n, oobn, flags, _, err := s.conn.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			os.Exit(0)
		}
		fds := receivedFDs(oob[:oobn])
		var m message
		if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || json.Unmarshal(buf[:n], &m) != nil {
			closeFDs(fds)
			fmt.Fprintln(os.Stderr, "sparrow: confine: server: malformed request")
			os.Exit(2)
		}
		switch m.Op {
		case opStart:
			s.start(m, fds)
		case opSignal:
			closeFDs(fds)
			s.signal(m.ID, syscall.Signal(m.Signal))
		case opAlive:
			closeFDs(fds)
			s.send(message{Op: opAlive, ID: m.ID, Alive: s.alive(m.ID)})
		case opEnd:
			closeFDs(fds)
			s.send(message{Op: opEnded, ID: m.ID, Clean: s.end(m.ID)})
		default:
			closeFDs(fds)
		}
	}
}

// start runs one command on the descriptors it came with: stdout and
// stderr, with stdin first when m.Stdin. A command that cannot start says
// why on its stderr and exits 126 or 127, as the per-command init does.
func (s *server) start(m message, fds []int) {
	defer closeFDs(fds)
	want := 2
	if m.Stdin {
		want = 3
	}
	if len(fds) != want || len(m.Argv) == 0 {
		s.send(message{Op: opStarted, ID: m.ID, Code: 127})
		return
	}
	files := make([]uintptr, 0, 3)
	if !m.Stdin {
		files = append(files, uintptr(s.devNull))
	}
	for _, fd := range fds {
		files = append(files, uintptr(fd))
	}
	stderr := int(files[2])
	path, err := lookPathIn(m.Argv[0], m.Env, m.Dir)
	if err != nil {
		fmt.Fprintf(fdWriter(stderr), "sparrow: %v\n", err)
		code := 127
		if errors.Is(err, errNotExecutable) {
			code = 126
		}
		s.send(message{Op: opStarted, ID: m.ID, Code: code})
		return
	}
	done := make(chan forkResult, 1)
	s.forks <- forkRequest{id: m.ID, path: path, m: m, files: files, done: done}
	r := <-done
	if r.err != nil {
		fmt.Fprintf(fdWriter(stderr), "sparrow: %s: %v\n", m.Argv[0], r.err)
		code := 127
		if errors.Is(r.err, unix.EACCES) || errors.Is(r.err, unix.ENOEXEC) {
			code = 126
		}
		s.send(message{Op: opStarted, ID: m.ID, Code: code})
		return
	}
	s.send(message{Op: opStarted, ID: m.ID, Pid: r.pid})
}

// signal sends sig to a command's process group.
func (s *server) signal(id uint64, sig syscall.Signal) {
	s.mu.Lock()
	c := s.cmds[id]
	s.mu.Unlock()
	if c != nil && sig > 0 {
		_ = unix.Kill(-c.pid, sig)
	}
}

// alive reports whether a command's process group has a member that is
// not a zombie.
func (s *server) alive(id uint64) bool {
	s.mu.Lock()
	c := s.cmds[id]
	s.mu.Unlock()
	if c == nil {
		return false
	}
	if !c.exited {
		return true
	}
	if unix.Kill(-c.pid, 0) != nil {
		return false
	}
	found := false
	s.eachProcess(func(pid, pgrp int) { found = found || pgrp == c.pid })
	return found
}

// end forgets a command. Once no command runs, whatever is left (a
// daemon that left the group with setsid) is killed and the scratch
// directories emptied; it reports whether they are empty.
func (s *server) end(id uint64) (clean bool) {
	s.mu.Lock()
	if c := s.cmds[id]; c != nil {
		delete(s.cmds, id)
		if !c.exited {
			_ = unix.Kill(-c.pid, unix.SIGKILL)
		}
	}
	idle := len(s.cmds) == 0
	s.mu.Unlock()
	if !idle {
		return true
	}
	if !s.killLeftovers() {
		return false
	}
	clean = true
	for _, d := range s.scratch {
		clean = emptyDir(d) && clean
	}
	removeIPC()
	return clean
}

// killLeftovers SIGKILLs every process but the server until none is left
// (the reaper collects them), for up to a second.
func (s *server) killLeftovers() bool {
	deadline := time.Now().Add(time.Second)
	for {
		left := false
		s.eachProcess(func(pid, _ int) {
			left = true
			_ = unix.Kill(pid, unix.SIGKILL)
		})
		if !left {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// eachProcess calls fn for each live process of the sandbox other than
// the server, with its process group.
func (s *server) eachProcess(fn func(pid, pgrp int)) {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == s.self {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		if state, pgrp, ok := parseStat(stat); ok && state != 'Z' && state != 'X' {
			fn(pid, pgrp)
		}
	}
}

// send writes one message to the plugin; a plugin that is gone ends the
// server in serve.
func (s *server) send(m message) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.conn.Write(b)
}

// receivedFDs are the descriptors passed with a message.
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// fdWriter writes to a raw descriptor the caller keeps.
type fdWriter int

func (w fdWriter) Write(p []byte) (int, error) { return unix.Write(int(w), p) }
