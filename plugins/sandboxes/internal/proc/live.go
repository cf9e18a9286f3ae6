package proc

import "sync"

// Groups are the process groups of commands still running, so that a
// backend's plugin.Cleaner can end them when the kernel dies: the
// parent-death signal reaches a command's leader, never what it started.
// The zero value is ready to use.
type Groups struct {
	mu    sync.Mutex
	pgids map[int]struct{}
}

// Add records a running group.
func (l *Groups) Add(pgid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pgids == nil {
		l.pgids = map[int]struct{}{}
	}
	l.pgids[pgid] = struct{}{}
}

// Remove forgets a group that has ended.
func (l *Groups) Remove(pgid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pgids, pgid)
}

// KillAll sends SIGKILL to every live group.
func (l *Groups) KillAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for pgid := range l.pgids {
		KillGroup(pgid)
	}
}
