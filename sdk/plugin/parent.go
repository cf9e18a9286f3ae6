package plugin

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// parentPollInterval bounds how long a plugin can outlive a kernel that died
// without the parent-death signal reaching it.
const parentPollInterval = 250 * time.Millisecond

// cleanupGrace bounds the cleanups run when the kernel dies.
const cleanupGrace = 2 * time.Second

// Cleaner is implemented by components that hold what must not outlive
// the kernel, such as the processes a sandbox started. Cleanup runs when
// the kernel dies, however it dies, just before the plugin exits; it must
// be quick (it gets two seconds in all).
type Cleaner interface {
	Cleanup()
}

// guardian ends the plugin when the kernel dies: on SIGTERM (the
// parent-death signal the host sets on Linux; caught only when there is
// something to clean up, otherwise it kills), or when a poll sees the
// plugin was re-parented.
type guardian struct {
	cleaners []Cleaner
	once     sync.Once
	done     chan struct{}
}

// guard starts watching ppid; the returned func stops the watch.
func guard(ppid int, cleaners []Cleaner) func() {
	g := &guardian{cleaners: cleaners, done: make(chan struct{})}
	if len(cleaners) > 0 {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		go func() {
			select {
			case <-sigs:
				g.exit()
			case <-g.done:
				signal.Stop(sigs)
			}
		}()
	}
	go func() {
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		for {
			// Checked before the first tick too: the parent may have died
			// before the parent-death signal was set.
			if os.Getppid() != ppid {
				g.exit()
			}
			select {
			case <-g.done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(g.done) }
}

// exit runs the cleanups, bounded, and exits.
func (g *guardian) exit() {
	g.once.Do(func() {
		finished := make(chan struct{})
		go func() {
			for _, c := range g.cleaners {
				c.Cleanup()
			}
			close(finished)
		}()
		select {
		case <-finished:
		case <-time.After(cleanupGrace):
		}
		os.Exit(2)
	})
}
