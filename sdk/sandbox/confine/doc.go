// Package confine runs one process under the Linux primitives Sparrow
// trusts: user, mount, pid, ipc, uts, cgroup and (unless allowed) network
// namespaces through bubblewrap, then, inside, Landlock, a seccomp filter,
// rlimits and no_new_privs applied by a small init before the real program
// starts; a cgroup bounds memory and processes where one can be created.
//
// The local-hardened sandbox backend runs every command through it and the
// plugin host launches plugin processes through it. Both need an init
// binary: any Go program whose main calls [Init] first (the backend's
// plugin binary, the sparrow binary itself). Init returns at once unless
// the process was started as the init.
//
// A Session is the same sandbox kept for many commands: its process is a
// server (the same init binary, in a second mode) that starts each
// command from its confined thread, so a command costs a fork and exec
// instead of bubblewrap and the init.
//
// Probe says which primitives work on this machine; Command refuses to run
// weaker than a Spec asks and says what is missing and how to get it.
package confine
