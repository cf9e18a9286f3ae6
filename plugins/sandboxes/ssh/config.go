package ssh

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// settings is the decoded `sandbox "ssh"` block.
type settings struct {
	// Host is the destination as ssh takes it: a name, an address, an
	// alias from the user's ssh config, or user@host.
	Host string `json:"host"`
	// User is the remote login (-l); empty leaves it to ssh.
	User string `json:"user"`
	// Port is the remote port (-p); 0 leaves it to ssh (the ssh config's
	// Port for the host, else 22).
	Port int `json:"port"`
	// IdentityFile is a private key (-i, with IdentitiesOnly=yes); "~/"
	// is the plugin's home.
	IdentityFile string `json:"identity_file"`
	// KnownHosts is the only file host keys are checked against; empty
	// means Sparrow's own, <StateDir>/ssh/known_hosts.
	KnownHosts string `json:"known_hosts"`
	// SSHConfig is the ssh config file (-F): empty for ssh's own
	// (~/.ssh/config, then /etc/ssh/ssh_config), "none" for none.
	SSHConfig string `json:"ssh_config"`
	// RemoteDir is the remote directory each session gets its own
	// directory under; "~/" is the remote login's home.
	RemoteDir string `json:"remote_dir"`
	// SSH is the OpenSSH client: a name on PATH or an absolute path.
	SSH string `json:"ssh"`
	// AcceptNewHostKey trusts an unknown host's key on first contact
	// (StrictHostKeyChecking=accept-new); a changed key is always refused.
	AcceptNewHostKey bool   `json:"accept_new_host_key"`
	Timeout          string `json:"timeout"`
	ConnectTimeout   string `json:"connect_timeout"`
	MaxOutputBytes   int64  `json:"max_output_bytes"`

	timeout, connectTimeout time.Duration
	// knownHosts, identity and controlDir are resolved local paths.
	knownHosts, identity, controlDir string
	// configErr says why the block cannot be used as it is, found at
	// Configure time but reported where it matters (unavailable).
	configErr string
}

func defaultSettings() settings {
	return settings{SSH: "ssh", RemoteDir: "~/.sparrow/sessions", Timeout: "10m", ConnectTimeout: "10s",
		MaxOutputBytes: 1 << 20, timeout: 10 * time.Minute, connectTimeout: 10 * time.Second}
}

// ConfigSchema implements plugin.Configurable.
func (*SSH) ConfigSchema() plugin.Schema {
	d := defaultSettings()
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "host", Type: plugin.String,
			Description: "the remote host as ssh takes it: name, address, alias from your ssh config, or user@host (required)"},
		{Name: "user", Type: plugin.String,
			Description: "remote login name (ssh -l); default: ssh's own (your ssh config's User, else your local name)"},
		{Name: "port", Type: plugin.Number,
			Description: "remote port (ssh -p); default: ssh's own (your ssh config's Port, else 22)"},
		{Name: "identity_file", Type: plugin.String,
			Description: "private key to log in with (ssh -i, IdentitiesOnly=yes); ~ is your home; default: your agent and ssh config"},
		{Name: "known_hosts", Type: plugin.String,
			Description: "the only file host keys are checked against; default: Sparrow's own <state dir>/ssh/known_hosts, never ~/.ssh/known_hosts"},
		{Name: "ssh_config", Type: plugin.String,
			Description: "ssh config file (ssh -F); default: ssh's own (~/.ssh/config, /etc/ssh/ssh_config); \"none\" reads none"},
		{Name: "remote_dir", Type: plugin.String, Default: d.RemoteDir,
			Description: "remote directory under which each session gets its own directory; absolute or starting with ~/ (the remote home)"},
		{Name: "ssh", Type: plugin.String, Default: d.SSH,
			Description: "the OpenSSH client: a name on PATH or an absolute path"},
		{Name: "accept_new_host_key", Type: plugin.Bool, Default: false,
			Description: "trust an unknown host's key on first contact and record it (StrictHostKeyChecking=accept-new); a changed key is always refused"},
		{Name: "timeout", Type: plugin.Duration, Default: d.Timeout,
			Description: "timeout of a command that sets none"},
		{Name: "connect_timeout", Type: plugin.Duration, Default: d.ConnectTimeout,
			Description: "how long connecting to the host may take (ssh ConnectTimeout)"},
		{Name: "max_output_bytes", Type: plugin.Number, Default: d.MaxOutputBytes,
			Description: "stdout and stderr kept together per command when it sets no cap"},
	}}
}

// Configure implements plugin.Configurable. Omitted attributes keep their
// defaults; every bad value is reported, not just the first.
func (b *SSH) Configure(_ context.Context, c plugin.Config) error {
	cfg := defaultSettings()
	if err := c.Decode(&cfg); err != nil {
		return fmt.Errorf("ssh: decode config: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	cfg.Host = strings.TrimSpace(cfg.Host)
	switch {
	case strings.HasPrefix(cfg.Host, "-"):
		bad("host %q: must not start with '-'", cfg.Host)
	case strings.ContainsAny(cfg.Host, " \t\r\n"):
		bad("host %q: must not contain spaces", cfg.Host)
	case cfg.User != "" && strings.Contains(cfg.Host, "@"):
		bad("host %q names a user and user = %q names another: keep one", cfg.Host, cfg.User)
	}
	if strings.HasPrefix(cfg.User, "-") || strings.ContainsAny(cfg.User, " \t\r\n@") {
		bad("user %q: want a login name", cfg.User)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		bad("port %d: want 1-65535", cfg.Port)
	}
	if cfg.SSH == "" {
		bad("ssh: must not be empty")
	}
	if err := checkRemoteDir(cfg.RemoteDir); err != nil {
		errs = append(errs, err)
	}
	home := b.getenv("HOME")
	var err error
	if cfg.IdentityFile != "" {
		if cfg.identity, err = localPath(cfg.IdentityFile, home); err != nil {
			bad("identity_file: %v", err)
		}
	}
	if cfg.SSHConfig != "" && cfg.SSHConfig != "none" {
		if cfg.SSHConfig, err = localPath(cfg.SSHConfig, home); err != nil {
			bad("ssh_config: %v", err)
		}
	}
	switch {
	case cfg.KnownHosts != "":
		if cfg.knownHosts, err = localPath(cfg.KnownHosts, home); err != nil {
			bad("known_hosts: %v", err)
		}
	case c.StateDir != "":
		cfg.knownHosts = filepath.Join(c.StateDir, "ssh", "known_hosts")
	default:
		cfg.configErr = "Sparrow's state directory is unknown, so it has no known_hosts file: set known_hosts in the sandbox \"ssh\" block"
	}
	if cfg.timeout, err = time.ParseDuration(cfg.Timeout); err != nil || cfg.timeout <= 0 {
		bad("timeout %q: want a positive duration such as 10m", cfg.Timeout)
	}
	if cfg.connectTimeout, err = time.ParseDuration(cfg.ConnectTimeout); err != nil || cfg.connectTimeout < time.Second {
		bad("connect_timeout %q: want a duration of at least 1s such as 10s", cfg.ConnectTimeout)
	}
	if cfg.MaxOutputBytes <= 0 {
		bad("max_output_bytes %d: want a positive number of bytes", cfg.MaxOutputBytes)
	}
	for _, f := range [][2]string{{"identity_file", cfg.identity}, {"known_hosts", cfg.knownHosts}} {
		if strings.ContainsAny(f[1], "\"%\r\n") {
			bad("%s %q: ssh cannot take a path with '\"', '%%' or a line break", f[0], f[1])
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("ssh: config: %w", errors.Join(errs...))
	}
	cfg.controlDir = controlDir(c.StateDir)
	b.mu.Lock()
	b.cfg = cfg
	b.mu.Unlock()
	return nil
}

func (b *SSH) settings() settings {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg
}

// checkRemoteDir accepts an absolute path or one below "~/", neither the
// root nor the home itself, without "..".
func checkRemoteDir(dir string) error {
	rest, home := strings.CutPrefix(dir, "~/")
	if !home && !path.IsAbs(dir) {
		return fmt.Errorf("remote_dir %q: want an absolute path or one starting with ~/", dir)
	}
	if strings.Contains("/"+rest+"/", "/../") || path.Clean("/"+rest) == "/" {
		return fmt.Errorf("remote_dir %q: want a directory below / or ~/, without ..", dir)
	}
	return nil
}

// remoteBase is remote_dir as a shell word: "~/x" becomes "$HOME"/x,
// expanded by the remote shell.
func remoteBase(dir string) string {
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		return `"$HOME"/` + quote(path.Clean(rest))
	}
	return quote(path.Clean(dir))
}

// localPath expands a leading "~/" with home and requires an absolute
// result.
func localPath(p, home string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home == "" {
			return "", fmt.Errorf("%q: HOME is not set, so ~ cannot be expanded", p)
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q: want an absolute path or one starting with ~/", p)
	}
	return filepath.Clean(p), nil
}
