package kernel

import (
	"context"
	"fmt"
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

// startCheckpoint opens the store and snapshots the workspace as a run
// finds it, in the background; the result arrives on the channel.
func (k *Kernel) startCheckpoint(ctx context.Context, ws, runID string) <-chan started {
	ch := make(chan started, 1)
	go func() {
		store, err := k.checkpointsOf(ctx, ws)
		if err != nil {
			ch <- started{err: err}
			return
		}
		cp, err := store.Create(ctx, checkpoint.Meta{RunID: runID, Summary: "start of run"})
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
