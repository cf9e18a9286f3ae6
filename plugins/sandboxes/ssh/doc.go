// Package ssh is the ssh sandbox backend: commands run on a configured
// host through the real OpenSSH client, so the user's ssh config, agent
// and ProxyJump keep working, while the options that guard the connection
// (strict host key checking against Sparrow's own known_hosts file, no
// prompts, no agent or port forwarding) are given on the command line,
// where they win over any config file.
//
// The workspace is a copy under the remote session directory, pushed
// before every command and pulled back after it (sdk/sandbox/wsync).
// Each command runs under a small remote shell wrapper that records its
// process group, so signals, timeouts and cancellation reach the remote
// command, and its exit status, so ssh's own failures (exit 255) are never
// taken for the command's. README.md lists what it cannot do.
package ssh
