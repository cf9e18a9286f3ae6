//go:build !unix

package singularity

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) {}

// run refuses: Apptainer runs only on Linux, and Capabilities says so.
func run(_ context.Context, _ *exec.Cmd, sio sandbox.IO, _ io.Writer, _ time.Duration, _ int64, _ *liveGroups) (sandbox.Exit, error) {
	fmt.Fprintln(orDiscard(sio.Stderr), "sparrow: singularity: Apptainer runs only on Linux")
	return sandbox.Exit{Code: sandbox.ExitUnsupported}, nil
}
