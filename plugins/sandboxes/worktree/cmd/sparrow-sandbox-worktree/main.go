// Command sparrow-sandbox-worktree is the git worktree sandbox plugin.
package main

import (
	"github.com/sparrow-cli/sparrow/plugins/sandboxes/worktree"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func main() { sandbox.Serve(worktree.New()) }
