// Command sparrow is the agentic coding CLI: one cli · grows with you.
package main

import (
	"os"

	"github.com/sparrow-cli/sparrow/cmd/sparrow/internal/cli"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// systemPolicy is the administrator's binding policy file. Packagers may
// move it at link time (-ldflags "-X main.systemPolicy=/path"); nothing at
// run time can.
var systemPolicy = config.DefaultSystemPolicyFile

func main() {
	// Plugins run confined under this same binary as their init; when
	// started as one, it never returns.
	confine.Init()
	// Without its own path (no /proc) plugins run unconfined, and
	// `sparrow doctor` says so.
	self, _ := os.Executable()
	os.Exit(cli.Main(cli.Env{
		Args:             os.Args[1:],
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		LookupEnv:        os.LookupEnv,
		SystemPolicyFile: systemPolicy,
		ConfineInit:      self,
	}))
}
