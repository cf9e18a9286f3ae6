// Command sparrow-sandbox-ssh is the ssh sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/ssh"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(ssh.New()) }
