// Package checkpoint snapshots a workspace with git plumbing so any batch
// of changes can be undone.
//
// Invariants:
//   - The user's HEAD, branches, index, stash and config are never touched:
//     snapshots go through a private index file in Sparrow's state
//     directory (GIT_INDEX_FILE), write-tree and commit-tree, and live
//     under refs/sparrow/ only.
//   - A workspace that is not a git repository gets a shadow git directory
//     in the state directory; the workspace gains no .git.
//   - .gitignore is respected: ignored files are never snapshotted and a
//     restore leaves them alone.
//   - A restore first snapshots the current state, so it can be undone.
package checkpoint
