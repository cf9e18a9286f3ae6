package plugin

import (
	"os"
	"time"
)

// parentPollInterval bounds how long a plugin can outlive a kernel that died
// without the parent-death signal reaching it.
const parentPollInterval = 250 * time.Millisecond

// watchParent exits the process once its parent changes, which means the
// kernel died and the plugin was re-parented. The returned func stops it.
func watchParent(ppid int) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if os.Getppid() != ppid {
					os.Exit(2)
				}
			}
		}
	}()
	return func() { close(done) }
}
