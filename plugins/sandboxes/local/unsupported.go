//go:build !unix

package local

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// unavailableReason says why this backend cannot run here.
const unavailableReason = "the local sandbox needs Unix process groups to kill what a command leaves behind"

func procAttr() *syscall.SysProcAttr { return nil }

// run refuses: without process groups a command's children could not be
// stopped, and this backend does not pretend it can.
func run(_ context.Context, _ *exec.Cmd, sio sandbox.IO, _ time.Duration, _ int64, _ *liveGroups) (sandbox.Exit, error) {
	fmt.Fprintf(orDiscard(sio.Stderr), "sparrow: local: %s\n", unavailableReason)
	return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
}

func killGroup(int) {}
