// Package localhardened is the local-hardened sandbox backend: commands
// run on this machine under sdk/sandbox/confine (bubblewrap namespaces,
// Landlock, seccomp, rlimits, a cgroup where one can be made) and see the
// workspace read-write, a read-only system and nothing else of the host.
//
// Denied names inside the workspace (.env, .ssh, keys, ...) appear empty,
// .git is readable but read-only, and a denied name a command creates is
// removed when it ends, so a planted repository or hook never reaches the
// host's git.
//
// A session's commands share one sandbox (confine.Session), started by
// the first of them; a command that does not fit it (network, other
// limits) gets one of its own. See README.md, docs/sandboxes.md and
// docs/SECURITY.md.
package localhardened
