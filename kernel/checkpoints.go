package kernel

import (
	"context"
	"fmt"

	"github.com/sparrow-cli/sparrow/kernel/checkpoint"
)

// Checkpoints opens the checkpoint store of the workspace.
func (k *Kernel) Checkpoints(ctx context.Context) (*checkpoint.Store, error) {
	if k.Config.Paths.StateDir == "" {
		return nil, fmt.Errorf("checkpoints need a state directory; set HOME or XDG_STATE_HOME")
	}
	return checkpoint.Open(ctx, k.opts.Workspace, k.Config.Paths.StateDir)
}

// runCheckpointer adapts a checkpoint store to the engine for one run.
type runCheckpointer struct {
	store *checkpoint.Store
	runID string
}

func (c runCheckpointer) Checkpoint(ctx context.Context, turn int, tool, summary string) (string, string, error) {
	cp, err := c.store.Create(ctx, checkpoint.Meta{RunID: c.runID, Turn: turn, Tool: tool, Summary: summary})
	return cp.ID, cp.Ref, err
}

func (c runCheckpointer) Rollback(ctx context.Context, id string) error {
	cp, err := c.store.Find(ctx, id)
	if err != nil {
		return err
	}
	_, err = c.store.Restore(ctx, cp, c.runID)
	return err
}
