// Package proc runs a command on this machine in its own process group
// and supervises it to the end, for the sandbox backends that start local
// processes (local, worktree, singularity, and the vendor-CLI backends'
// bookkeeping): signals forwarded, timeout and cancel as SIGTERM then
// SIGKILL after a grace period, whatever the command left in its group
// stopped when it exits, output through real pipes under one cap, and the
// live groups a plugin.Cleaner kills when the kernel dies.
package proc
