// Command sparrow-sandbox-local-hardened is the local-hardened sandbox
// plugin. The same binary is the init that confines each command from
// inside its sandbox, so confine.Init comes first.
package main

import (
	localhardened "github.com/sparrow-cli/sparrow/plugins/sandboxes/local-hardened"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

func main() {
	confine.Init()
	sandbox.Serve(localhardened.New())
}
