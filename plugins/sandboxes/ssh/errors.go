package ssh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// exitSSH is the status ssh exits with when it failed itself (ssh(1):
// "ssh exits with the exit status of the remote command or with 255 if an
// error occurred"). A remote command can exit 255 too; the wrapper's
// status file tells them apart.
const exitSSH = 255

// ErrHostKey is a connection refused because the host's key is unknown
// or does not match Sparrow's known_hosts file.
var ErrHostKey = errors.New("host key not trusted")

// failure explains an ssh run that failed itself (exit 255, or ssh not
// started), from the tail of its stderr: the host key, the login, or the
// connection. It names the known_hosts file and the fix.
func (b *SSH) failure(cfg settings, err error, stderr string) error {
	if errors.Is(err, exec.ErrNotFound) {
		return errors.New(fixInstall)
	}
	last := lastLine(stderr)
	switch {
	case strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED") || strings.Contains(stderr, "has changed and you have requested strict checking"):
		host, port := b.resolve(cfg)
		return fmt.Errorf("%w: the key %s presented does not match the one recorded in %s (REMOTE HOST IDENTIFICATION HAS CHANGED); nothing was run. "+
			"If the host was really re-keyed, check its new fingerprint out of band (on the host: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), "+
			"then replace the entry: ssh-keygen -f %s -R %s && ssh-keyscan -p %s %s >> %s",
			ErrHostKey, cfg.Host, cfg.knownHosts, quote(cfg.knownHosts), quote(knownHostsName(host, port)), port, quote(host), quote(cfg.knownHosts))
	case strings.Contains(stderr, "Host key verification failed") || strings.Contains(stderr, "host key is known for"):
		host, port := b.resolve(cfg)
		return fmt.Errorf("%w: %s is not in Sparrow's known_hosts file %s, and unknown hosts are refused; nothing was run. "+
			"Add its key after checking the fingerprint: ssh-keyscan -p %s %s >> %s, then compare ssh-keygen -lf %s with ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub run on the host; "+
			"or set accept_new_host_key = true to trust the key on first contact",
			ErrHostKey, cfg.Host, cfg.knownHosts, port, quote(host), quote(cfg.knownHosts), quote(cfg.knownHosts))
	case strings.Contains(stderr, "Permission denied"):
		return fmt.Errorf("ssh could not log in to %s (%s): set identity_file or add the key to your agent (ssh-add), and put its .pub in the host's ~/.ssh/authorized_keys; Sparrow never prompts for passwords", cfg.Host, last)
	case last == "" && err != nil:
		return fmt.Errorf("ssh to %s failed (%v) without saying why", cfg.Host, err)
	case last == "":
		return fmt.Errorf("ssh to %s failed without saying why", cfg.Host)
	}
	return fmt.Errorf("could not reach %s over ssh: %s", cfg.Host, last)
}

// resolve asks ssh where it would connect (ssh -G evaluates the ssh
// config without connecting), for fixes that name the real host and port.
func (b *SSH) resolve(cfg settings) (host, port string) {
	host, port = cfg.Host, "22"
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if cfg.Port != 0 {
		port = fmt.Sprint(cfg.Port)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := b.command(ctx, cfg, "none", asClient, []string{"-G"}, "")
	out, err := cmd.Output()
	if err != nil {
		return host, port
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "hostname":
			host = v
		case "port":
			port = v
		}
	}
	return host, port
}

// knownHostsName is how known_hosts names a host: bare on port 22,
// "[host]:port" otherwise.
func knownHostsName(host, port string) string {
	if port == "22" {
		return host
	}
	return "[" + host + "]:" + port
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// tailBuffer keeps the last 8 KiB written: enough for ssh's messages,
// which come last.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 8192 {
		t.b = append(t.b[:0], t.b[len(t.b)-8192:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
