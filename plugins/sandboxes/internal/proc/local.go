//go:build unix

package proc

import (
	"os"
	"os/exec"
	"syscall"
)

// localProcess is a command Run starts itself in its own process group.
type localProcess struct {
	cmd  *exec.Cmd
	live *Groups
	pgid int
}

func (p *localProcess) Start(stdin, stdout, stderr *os.File) error {
	if stdin != nil {
		p.cmd.Stdin = stdin
	}
	p.cmd.Stdout, p.cmd.Stderr = stdout, stderr
	if err := p.cmd.Start(); err != nil {
		return &NotStartedError{Err: err}
	}
	p.pgid = p.cmd.Process.Pid
	p.live.Add(p.pgid)
	return nil
}

func (p *localProcess) Wait() (syscall.WaitStatus, error) {
	err := p.cmd.Wait()
	if p.cmd.ProcessState == nil {
		return 0, err
	}
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, nil
}

func (p *localProcess) Signal(sig syscall.Signal) { _ = syscall.Kill(-p.pgid, sig) }

func (p *localProcess) signalLeader(sig syscall.Signal) { _ = syscall.Kill(p.pgid, sig) }

func (p *localProcess) Alive() bool { return groupAlive(p.pgid) }

// Stop sends a last SIGKILL, only while the group still exists (so its
// id cannot have been reused), for a leftover forked while the group was
// being checked, and forgets the group.
func (p *localProcess) Stop() {
	if syscall.Kill(-p.pgid, 0) == nil {
		p.Signal(syscall.SIGKILL)
	}
	p.live.Remove(p.pgid)
}
