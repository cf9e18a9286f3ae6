// Command sparrow is the agentic coding CLI: one cli · grows with you.
package main

import (
	"os"
	"path/filepath"

	"github.com/sparrow-cli/sparrow/cmd/sparrow/internal/cli"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// systemPolicy is the administrator's binding policy file. Packagers may
// move it at link time (-ldflags "-X main.systemPolicy=/path"); nothing at
// run time can.
var systemPolicy = config.DefaultSystemPolicyFile

func main() {
	// Plugins run confined under an init: sparrow-init beside this binary
	// when it is there (it starts in a fraction of the time), else this
	// same binary; when started as one, it never returns.
	confine.Init()
	// Without its own path (no /proc) plugins run unconfined, and
	// `sparrow doctor` says so.
	self, _ := os.Executable()
	init := confineInit(self)
	os.Exit(cli.Main(cli.Env{
		Args:             os.Args[1:],
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		LookupEnv:        os.LookupEnv,
		SystemPolicyFile: systemPolicy,
		ConfineInit:      init,
	}))
}

// confineInit is the init plugins are confined with: the sparrow-init
// installed beside sparrow (as trusted as sparrow itself), or sparrow.
func confineInit(self string) string {
	if self == "" {
		return ""
	}
	small := filepath.Join(filepath.Dir(self), "sparrow-init")
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return small
	}
	return self
}
