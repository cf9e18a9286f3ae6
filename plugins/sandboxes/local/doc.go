// Package local is the local sandbox backend: commands run directly on
// this machine, in the workspace, each in its own process group that is
// killed as a whole when the command ends, times out or is cancelled.
//
// It isolates nothing, and says so: requests for isolation or limits it
// cannot enforce are refused (an error at Prepare, exit 127 with a message
// at Exec), never silently ignored. README.md lists what it refuses.
package local
