package singularity

import "sync"

// liveGroups are the process groups of commands still running, so that
// Cleanup can end them when the kernel dies.
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

// Cleanup implements plugin.Cleaner: when the kernel dies, every running
// apptainer process is killed with its group (the container dies with
// it: the starter sets a parent-death signal), and the sessions' scratch
// directories, which may hold env files and pulled images, are removed.
func (b *Singularity) Cleanup() {
	b.live.killAll()
	b.mu.Lock()
	sessions := b.sessions
	b.sessions = map[string]*session{}
	b.mu.Unlock()
	for _, s := range sessions {
		_ = removeAll(s.dir)
	}
}
