//go:build linux

package localhardened

import (
	"context"
	"sync/atomic"
	"syscall"
	"time"
)

// diskWatch stops a command once the filesystems it may write have lost
// more than limit bytes of free space since it started: RLIMIT_FSIZE caps
// each file, this caps them all together.
type diskWatch struct {
	limit int64
	over  atomic.Bool
}

// diskPoll is how often free space is checked.
const diskPoll = 10 * time.Millisecond

func watchDisk(ctx context.Context, paths []string, limit int64, stop func()) *diskWatch {
	w := &diskWatch{limit: limit}
	type fs struct {
		path string
		free int64
	}
	var watched []fs
	seen := map[uint64]bool{}
	for _, p := range paths {
		var st syscall.Statfs_t
		if syscall.Statfs(p, &st) != nil {
			continue
		}
		id := uint64(st.Fsid.X__val[0])<<32 | uint64(uint32(st.Fsid.X__val[1]))
		if seen[id] {
			continue
		}
		seen[id] = true
		watched = append(watched, fs{p, int64(st.Bavail) * st.Bsize})
	}
	go func() {
		t := time.NewTicker(diskPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, f := range watched {
				var st syscall.Statfs_t
				if syscall.Statfs(f.path, &st) == nil && f.free-int64(st.Bavail)*st.Bsize > limit {
					w.over.Store(true)
					stop()
					return
				}
			}
		}
	}()
	return w
}

func (w *diskWatch) exceeded() bool { return w.over.Load() }
