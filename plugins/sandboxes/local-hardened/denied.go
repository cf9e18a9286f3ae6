package localhardened

import "time"

// readableName is the denied name commands may still read: history and
// `git status`, `git diff`, `git log` need it, writing it (hooks,
// core.hooksPath, ...) would let a command plant code the host's git runs.
const readableName = ".git"

// deniedEntry is a path in the workspace whose name is denied.
type deniedEntry struct {
	path  string
	isDir bool
	// changed is when its inode last changed (ctime): creating, renaming
	// or writing it sets this, and a command cannot set it back.
	changed time.Time
}
