package ssh

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// controlPersist is how long a session's master connection outlives its
// last use; a master that expired is opened again by the next command.
const controlPersist = "60s"

// connection modes of an ssh invocation.
const (
	// asClient uses the session's master when it is up and connects on
	// its own otherwise; it never becomes a master, so no backgrounded
	// process ever holds a command's output pipes.
	asClient = "no"
	// asMaster opens the session's master and backgrounds it.
	asMaster = "yes"
)

// options are the ssh options of every invocation, in front of "--",
// the host and the remote command. Options given with -o come before any
// config file and, since ssh keeps the first value it obtains for each
// option (ssh_config(5)), these hold whatever the user's ssh config says:
// strict host key checking against Sparrow's own known_hosts only, no
// prompts, no agent, X11 or port forwarding, no local commands.
func (cfg settings) options(control, mode string) []string {
	strict := "yes"
	if cfg.AcceptNewHostKey {
		strict = "accept-new"
	}
	var args []string
	if cfg.SSHConfig != "" {
		args = append(args, "-F", cfg.SSHConfig)
	}
	args = append(args, "-T", "-e", "none",
		// KnownHostsCommand is new in OpenSSH 8.5; older clients ignore it.
		"-o", "IgnoreUnknown=KnownHostsCommand",
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking="+strict,
		"-o", "UserKnownHostsFile="+optionPath(cfg.knownHosts),
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "KnownHostsCommand=none",
		"-o", "UpdateHostKeys=no",
		"-o", "CheckHostIP=no",
		"-o", "VerifyHostKeyDNS=no",
		"-o", "ForwardAgent=no",
		"-o", "ForwardX11=no",
		"-o", "ClearAllForwardings=yes",
		"-o", "PermitLocalCommand=no",
		"-o", "LogLevel=ERROR",
		"-o", "ConnectTimeout="+strconv.Itoa(int((cfg.connectTimeout+time.Second-1)/time.Second)),
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=3",
		"-o", "ControlPath="+control,
		"-o", "ControlMaster="+mode,
	)
	if mode == asMaster {
		args = append(args, "-o", "ControlPersist="+controlPersist)
	}
	if cfg.User != "" {
		args = append(args, "-l", cfg.User)
	}
	if cfg.Port != 0 {
		args = append(args, "-p", strconv.Itoa(cfg.Port))
	}
	if cfg.identity != "" {
		args = append(args, "-i", cfg.identity, "-o", "IdentitiesOnly=yes")
	}
	return args
}

// optionPath writes a path as an -o value: ssh splits values on
// whitespace unless quoted. Configure refuses paths with '"', '%' (ssh
// expands %-tokens) or line breaks.
func optionPath(p string) string {
	if strings.ContainsAny(p, " \t") {
		return `"` + p + `"`
	}
	return p
}

// plainPath reports whether p can be handed to ssh as an option value
// and a socket path without quoting or token expansion.
func plainPath(p string) bool { return !strings.ContainsAny(p, "\"%\r\n \t'\\") }

// command prepares one ssh invocation: the options, "--", the host and
// the remote command (a single word, run by the remote login shell).
// With no remote command, extra carries a control request (-O, -N).
func (b *SSH) command(ctx context.Context, cfg settings, control, mode string, extra []string, remote string) *exec.Cmd {
	args := append(cfg.options(control, mode), extra...)
	args = append(args, "--", cfg.Host)
	if remote != "" {
		args = append(args, remote)
	}
	cmd := exec.CommandContext(ctx, cfg.SSH, args...)
	cmd.Env = b.environ()
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = 2 * time.Second
	if p, err := b.lookPath(cfg.SSH); err == nil {
		cmd.Path, cmd.Err = p, nil
	} else {
		cmd.Err = exec.ErrNotFound
	}
	return cmd
}

// shell is the remote command that runs script with sh, whatever the
// login shell is, as long as it parses single quotes and exec as POSIX
// shells do.
func shell(script string, args ...string) string {
	var b strings.Builder
	b.WriteString("exec sh -c ")
	b.WriteString(quote(script))
	if len(args) > 0 {
		b.WriteString(" sparrow")
		for _, a := range args {
			b.WriteString(" ")
			b.WriteString(quote(a))
		}
	}
	return b.String()
}
