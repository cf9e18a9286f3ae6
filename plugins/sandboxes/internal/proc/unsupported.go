//go:build !unix

package proc

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Attr is nil: there are no process groups here.
func Attr() *syscall.SysProcAttr { return nil }

// KillGroup does nothing: there are no process groups here.
func KillGroup(int) {}

// RunProcess refuses, as Run does.
func RunProcess(_ context.Context, _ Process, sio sandbox.IO, o Options) (sandbox.Exit, error) {
	return Run(context.Background(), nil, sio, o)
}

// Run refuses: without process groups a command's children could not be
// stopped, and no backend pretends it can.
func Run(_ context.Context, _ *exec.Cmd, sio sandbox.IO, o Options) (sandbox.Exit, error) {
	fmt.Fprintf(OrDiscard(sio.Stderr), "sparrow: %s: this backend needs Unix process groups to kill what a command leaves behind\n", o.Backend)
	return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
}
