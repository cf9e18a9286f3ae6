package kernel

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/checkpoint"
	"github.com/sparrow-cli/sparrow/kernel/engine"
)

// Checkpoints opens the checkpoint store of the workspace.
func (k *Kernel) Checkpoints(ctx context.Context) (*checkpoint.Store, error) {
	return k.checkpointsOf(ctx, k.opts.Workspace)
}

// checkpointsOf opens the checkpoint store of the directory ws.
func (k *Kernel) checkpointsOf(ctx context.Context, ws string) (*checkpoint.Store, error) {
	if k.Config.Paths.StateDir == "" {
		return nil, fmt.Errorf("checkpoints need a state directory; set HOME or XDG_STATE_HOME")
	}
	maxSize := int64(k.Config.Checkpoints.MaxFileMB) << 20
	if maxSize == 0 {
		maxSize = -1 // max_file_mb = 0: no cap
	}
	return checkpoint.Open(ctx, ws, k.Config.Paths.StateDir, checkpoint.Options{MaxFileSize: maxSize})
}

type started struct {
	store *checkpoint.Store
	cp    checkpoint.Checkpoint
	err   error
}

// snapshotAhead opens the store of ws and snapshots the workspace in the
// background, while plugins start and the sandbox opens; startCheckpoint
// commits it once the run's workspace is known to be ws.
func (k *Kernel) snapshotAhead(ctx context.Context, ws string) *aheadSnapshot {
	a := &aheadSnapshot{ws: ws, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		if a.store, a.err = k.checkpointsOf(ctx, ws); a.err == nil {
			a.snap, a.err = a.store.Snapshot(ctx)
		}
	}()
	return a
}

// aheadSnapshot is a snapshot taken ahead of the run, of ws.
type aheadSnapshot struct {
	ws    string
	done  chan struct{}
	store *checkpoint.Store
	snap  checkpoint.Snapshot
	err   error
}

// startCheckpoint records the state a run starts from as its first
// checkpoint (runID is new: it has none yet), in the background; the
// result arrives on the channel. When ahead is a snapshot of ws (the
// sandbox did not move the run's files elsewhere, as a worktree does) it
// is what is recorded: the workspace as the run found it, before the
// sandbox opened; else ws is snapshotted now (ahead's objects stay
// unreferenced).
func (k *Kernel) startCheckpoint(ctx context.Context, ws, runID string, ahead *aheadSnapshot) <-chan started {
	ch := make(chan started, 1)
	meta := checkpoint.Meta{RunID: runID, Summary: "start of run"}
	go func() {
		if filepath.Clean(ahead.ws) == filepath.Clean(ws) {
			<-ahead.done
			if ahead.err != nil {
				ch <- started{err: ahead.err}
				return
			}
			ahead.store.NewRun(runID)
			cp, err := ahead.store.Commit(ctx, ahead.snap, meta)
			ch <- started{store: ahead.store, cp: cp, err: err}
			return
		}
		k.Log.Debug("run: the sandbox moved the workspace; snapshotting it there", "from", ahead.ws, "to", ws)
		store, err := k.checkpointsOf(ctx, ws)
		if err != nil {
			ch <- started{err: err}
			return
		}
		store.NewRun(runID)
		cp, err := store.Create(ctx, meta)
		ch <- started{store: store, cp: cp, err: err}
	}()
	return ch
}

// pruneCheckpoints drops checkpoints older than the configured retention.
// A failure costs nothing but disk, so it is logged, not raised.
func (k *Kernel) pruneCheckpoints(ctx context.Context, store *checkpoint.Store) {
	keep := k.Config.Checkpoints.Retention
	if keep == 0 {
		return
	}
	n, err := store.Prune(ctx, time.Now().Add(-keep))
	if err != nil {
		k.Log.Warn("pruning old checkpoints failed", "error", err)
	} else if n > 0 {
		k.Log.Debug("pruned old checkpoints", "count", n, "retention", keep)
	}
}

// runCheckpointer adapts a checkpoint store to the engine for one run.
type runCheckpointer struct {
	store *checkpoint.Store
	runID string
}

func (c runCheckpointer) Checkpoint(ctx context.Context, req engine.CheckpointRequest) (engine.CheckpointInfo, error) {
	cp, err := c.store.Create(ctx, checkpoint.Meta{RunID: c.runID, Turn: req.Turn, Tool: req.Tool, Summary: req.Summary})
	return engine.CheckpointInfo{ID: cp.ID, Ref: cp.Ref, Skipped: cp.Meta.Skipped}, err
}

func (c runCheckpointer) Rollback(ctx context.Context, id string) error {
	cp, err := c.store.Find(ctx, id)
	if err != nil {
		return err
	}
	_, err = c.store.Restore(ctx, cp, c.runID)
	return err
}
