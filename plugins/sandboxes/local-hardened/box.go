package localhardened

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
	"syscall"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// box is a session's sandbox kept for its commands (confine.Session)
// and the layout it was started from.
type box struct {
	sb     *confine.Session
	layout confine.Spec
	// users counts commands running in it; ran is set once one started.
	users int
	ran   bool
	// retired: no new command goes in; closed once users is 0.
	retired bool
}

// boxes are a session's sandboxes: the current one, and retired ones
// that still run a command.
type boxes struct {
	mu      sync.Mutex
	current *box
	all     []*box
	closed  bool
	// broken is a layout whose sandbox never came up: its commands run
	// in sandboxes of their own rather than fail to start one each time.
	broken *confine.Spec
}

// errTornDown is a session whose sandboxes were stopped; errBroken a
// layout whose sandbox did not come up.
var (
	errTornDown = errors.New("the session was torn down")
	errBroken   = errors.New("the session's sandbox did not come up")
)

// acquire returns the session's sandbox for a command laid out as
// layout, starting one when there is none, or when the current one has
// died, left a scratch directory unemptied, has another layout (a denied
// path appeared or went) or is stale (a hidden or bound path was
// replaced on the host, so a bind mount no longer covers it).
func (bs *boxes) acquire(layout confine.Spec, rep confine.Report) (*box, error) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.closed {
		return nil, errTornDown
	}
	if bs.broken != nil && reflect.DeepEqual(*bs.broken, layout) {
		return nil, errBroken
	}
	if b := bs.current; b != nil && (!b.sb.Usable() || !reflect.DeepEqual(b.layout, layout) || b.sb.Stale()) {
		bs.retireLocked(b)
	}
	if bs.current == nil {
		sb, err := confine.StartSession(layout, rep)
		if err != nil {
			return nil, err
		}
		bs.current = &box{sb: sb, layout: layout}
		bs.all = append(bs.all, bs.current)
	}
	bs.current.users++
	return bs.current, nil
}

// release is acquire's counterpart, once the command has ended; it
// reports whether a command had started in b before this one.
func (bs *boxes) release(b *box, started bool) (ranBefore bool) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	ranBefore = b.ran
	b.users--
	b.ran = b.ran || started
	if b.retired && b.users == 0 {
		bs.closeLocked(b)
	}
	return ranBefore
}

// retire keeps new commands out of b (it died under one); broken says
// it never came up.
func (bs *boxes) retire(b *box, broken bool) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if broken {
		bs.broken = &b.layout
	}
	bs.retireLocked(b)
}

func (bs *boxes) retireLocked(b *box) {
	b.retired = true
	if bs.current == b {
		bs.current = nil
	}
	if b.users == 0 {
		bs.closeLocked(b)
	}
}

func (bs *boxes) closeLocked(b *box) {
	b.sb.Close()
	for i, x := range bs.all {
		if x == b {
			bs.all = append(bs.all[:i], bs.all[i+1:]...)
			break
		}
	}
}

// closeAll stops every sandbox of the session, commands running in them
// included; later acquires fail.
func (bs *boxes) closeAll() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.closed = true
	bs.current = nil
	for _, b := range bs.all {
		b.sb.Close()
	}
	bs.all = nil
}

// sharedProcess adapts a session's command to proc's supervisor.
type sharedProcess struct {
	*confine.Process
	started bool
}

func (p *sharedProcess) Start(stdin, stdout, stderr *os.File) error {
	err := p.Process.Start(stdin, stdout, stderr)
	var ns *confine.NotStartedError
	if errors.As(err, &ns) {
		return &proc.NotStartedError{Code: ns.Code, Err: err}
	}
	p.started = err == nil
	return err
}

var _ proc.Process = (*sharedProcess)(nil)

// execShared runs the command in the session's sandbox. ran is false
// when it could not (limits that hold per process, a command too large
// to pass, a sandbox that does not come up): the caller then runs it in a
// sandbox of its own. A sandbox that dies before the command started is
// replaced once; one that dies under it ends the command, which says so.
//
// notes says to print the sandbox's fallbacks (the request asked for
// memory or process limits), as a sandbox of its own would.
func (h *Hardened) execShared(ctx context.Context, s *session, spec confine.Spec, rep confine.Report, sio sandbox.IO, o proc.Options, notes bool) (exit sandbox.Exit, oom, ran bool, err error) {
	layout := spec
	layout.Argv, layout.Env, layout.Dir = nil, nil, s.root
	for attempt := 0; attempt < 2; attempt++ {
		b, err := s.boxes.acquire(layout, rep)
		if err != nil {
			return exit, false, false, nil
		}
		cmd, err := b.sb.Command(spec.Argv, spec.Dir, spec.Env)
		if err != nil {
			s.boxes.release(b, false)
			return exit, false, false, nil
		}
		if notes {
			for _, n := range b.sb.Notes {
				fmt.Fprintf(proc.OrDiscard(sio.Stderr), "sparrow: local-hardened: %s\n", n)
			}
		}
		p := &sharedProcess{Process: cmd}
		kills := b.sb.OOMKills()
		exit, err = proc.RunProcess(ctx, p, sio, o)
		oom = b.sb.OOMKills() > kills
		fresh := !s.boxes.release(b, p.started)
		switch {
		case err == nil:
			return exit, oom, true, nil
		case !errors.Is(err, confine.ErrSessionLost):
			return exit, oom, true, err
		case p.started:
			s.boxes.retire(b, false)
			stderr := proc.OrDiscard(sio.Stderr)
			if !oom {
				fmt.Fprintf(stderr, "sparrow: local-hardened: the session's sandbox stopped under the command (%v); the command was killed with it, the next one starts a new sandbox\n", err)
			}
			exit.Code, exit.Signal = 128+int(syscall.SIGKILL), "KILL"
			return exit, oom, true, nil
		case fresh:
			// It never came up: the command's own sandbox says why.
			s.boxes.retire(b, true)
			return exit, false, false, nil
		}
		s.boxes.retire(b, false)
	}
	return exit, false, false, nil
}
