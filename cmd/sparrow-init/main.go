// Command sparrow-init confines plugin processes: Sparrow binds it into each
// plugin's sandbox, where it applies Landlock, seccomp and rlimits and
// execs the plugin. It holds nothing but confine.Init, so it starts in a
// fraction of the time the whole sparrow binary takes; without it,
// sparrow uses itself.
package main

import (
	"fmt"
	"os"

	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

func main() {
	confine.Init()
	fmt.Fprintln(os.Stderr, "sparrow-init: this is Sparrow's confinement init; sparrow starts it, inside a plugin's sandbox")
	os.Exit(2)
}
