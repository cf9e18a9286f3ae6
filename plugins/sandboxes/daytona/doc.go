// Package daytona is the Daytona sandbox backend: commands run in a Daytona
// sandbox, a remote container, through the vendor's own `daytona` CLI. A
// sandbox is created with `daytona create`, files travel with `daytona cp`
// as tar archives, and commands run with `daytona exec` as staged shell
// scripts, so no argument ever depends on how the CLI re-quotes a command.
//
// It never reports success it did not see: a missing or logged-out CLI, a
// limit it cannot enforce, or an exit status that never arrived is exit 127
// with the reason on stderr. README.md lists what it cannot do.
package daytona
