package singularity

// Cleanup implements plugin.Cleaner: when the kernel dies, every running
// apptainer process is killed with its group (the container dies with
// it: the starter sets a parent-death signal), and the sessions' scratch
// directories, which may hold env files and pulled images, are removed.
func (b *Singularity) Cleanup() {
	b.live.KillAll()
	b.mu.Lock()
	sessions := b.sessions
	b.sessions = map[string]*session{}
	b.mu.Unlock()
	for _, s := range sessions {
		_ = removeAll(s.dir)
	}
}
