// Package singularity is the Apptainer / SingularityCE sandbox backend:
// each command runs as its own `apptainer exec --containall --cleanenv`
// of the configured image, with the workspace bound read-write at the
// container's workdir, denied paths masked, only the allowed variables
// passed (through an --env-file, never argv), and the network namespace
// emptied (`--net --network none`) unless the policy allows network.
//
// The apptainer process is a local child in its own process group:
// signals go to it (its starter forwards them into the container), and
// timeouts, cancellation and plugin death end the whole group. Nothing is
// left running between commands, so there is nothing to stop but the
// session's scratch directory. Requests it cannot honour (a disk or
// CPU-time limit, cgroup limits this machine cannot delegate, network for
// a policy that denies it) exit 127 with the reason, never silently.
package singularity
