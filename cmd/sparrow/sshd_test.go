package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// startSSHD starts a real OpenSSH server on 127.0.0.1 for the script, with
// freshly generated host and user keys, and sets what a config needs to
// reach it: $SSH_PORT, $SSH_USER, $SSH_KEY (the user's private key) and
// $SSH_KNOWN_HOSTS (a known_hosts file holding the host key). The server
// is stopped when the script ends. Without sshd the script fails: CI
// installs openssh-server, so a skip would hide a broken setup.
//
//	sshd
func startSSHD(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sshd")
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if sshd = "/usr/sbin/sshd"; !fileExists(sshd) {
			ts.Fatalf("sshd not found: install openssh-server (.ci/run does)")
		}
	}
	dir := ts.MkAbs("sshd")
	ts.Check(os.MkdirAll(dir, 0o700))
	for _, k := range []string{"host_key", "user_key"} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", k, "-f", filepath.Join(dir, k)).CombinedOutput()
		if err != nil {
			ts.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600))
	port := freePort(ts)
	u, err := user.Current()
	ts.Check(err)
	if os.Geteuid() == 0 {
		// sshd running as root wants its privilege separation directory.
		ts.Check(os.MkdirAll("/run/sshd", 0o755))
	}
	conf := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers %s
`, port, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"), u.Username)
	ts.Check(os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(conf), 0o600))
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	logf, err := os.Create(filepath.Join(dir, "sshd.log"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	ts.Check(cmd.Start())
	ts.Defer(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			ts.Fatalf("sshd did not listen on 127.0.0.1:%d: %s", port, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	hostPub, err := os.ReadFile(filepath.Join(dir, "host_key.pub"))
	ts.Check(err)
	fields := strings.Fields(string(hostPub))
	known := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, fields[0], fields[1])
	ts.Check(os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(known), 0o600))
	ts.Setenv("SSH_PORT", fmt.Sprint(port))
	ts.Setenv("SSH_USER", u.Username)
	ts.Setenv("SSH_KEY", filepath.Join(dir, "user_key"))
	ts.Setenv("SSH_KNOWN_HOSTS", filepath.Join(dir, "known_hosts"))
}

func freePort(ts *testscript.TestScript) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
