package local

import (
	"sync"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

var _ plugin.Cleaner = (*Local)(nil)

// liveGroups are the process groups of commands still running, so that
// Cleanup can end them when the kernel dies: the parent-death signal
// reaches a command's leader, never what it started.
type liveGroups struct {
	mu    sync.Mutex
	pgids map[int]struct{}
}

func (l *liveGroups) add(pgid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pgids == nil {
		l.pgids = map[int]struct{}{}
	}
	l.pgids[pgid] = struct{}{}
}

func (l *liveGroups) remove(pgid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pgids, pgid)
}

// killAll sends SIGKILL to every live group.
func (l *liveGroups) killAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for pgid := range l.pgids {
		killGroup(pgid)
	}
}

// Cleanup implements plugin.Cleaner: when the kernel dies, every command
// still running is killed with everything it started in its group.
func (l *Local) Cleanup() { l.live.killAll() }
