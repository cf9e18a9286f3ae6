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
// Probe says which primitives work on this machine; Command refuses to run
// weaker than a Spec asks and says what is missing and how to get it.
package confine
