// Command hello-tool is a third-party Sparrow tool plugin, built against
// the SDK alone. It serves two tools from one process.
package main

import "github.com/sparrow-cli/sparrow/sdk/tool"

func main() { tool.Serve(greet{}, shout{}) }
