//go:build unix

package ssh

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// sshd is a real OpenSSH server on 127.0.0.1, run by the test as the
// current user, accepting only the test's user key.
type sshd struct {
	dir              string
	port             int
	user             string
	hostPub, userKey string
	cmd              *exec.Cmd
	log              *syncBuffer
	stopOnce         sync.Once
	sshdPath, keygen string
	keyscan, sshPath string
}

// tools finds the OpenSSH programs the tests need. Missing ones fail the
// test: CI installs openssh-server, and a silent skip would hide a broken
// CI. SPARROW_SKIP_SSHD=1 skips instead, on machines that cannot have it.
func tools(t *testing.T) (sshdPath, keygen, keyscan, sshPath string) {
	t.Helper()
	find := func(name string, dirs ...string) string {
		for _, d := range dirs {
			if p := filepath.Join(d, name); isExecutable(p) {
				return p
			}
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		if os.Getenv("SPARROW_SKIP_SSHD") == "1" {
			t.Skipf("%s not found and SPARROW_SKIP_SSHD=1: the ssh backend's tests need a real OpenSSH server", name)
		}
		t.Fatalf("%s not found: install openssh-server and openssh-client (apt install openssh-server openssh-client), or set SPARROW_SKIP_SSHD=1 to skip these tests", name)
		return ""
	}
	return find("sshd", "/usr/sbin", "/usr/local/sbin", "/sbin"), find("ssh-keygen"), find("ssh-keyscan"), find("ssh")
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// startSSHD generates a host key and a user key, writes a config and runs
// sshd -D -e until the test ends.
func startSSHD(t *testing.T) *sshd {
	t.Helper()
	d := &sshd{dir: t.TempDir(), log: &syncBuffer{}}
	d.sshdPath, d.keygen, d.keyscan, d.sshPath = tools(t)
	u, err := user.Current()
	must(t, err)
	d.user = u.Username
	hostKey := filepath.Join(d.dir, "host_ed25519")
	d.userKey = filepath.Join(d.dir, "user_ed25519")
	for _, k := range []string{hostKey, d.userKey} {
		run(t, d.keygen, "-q", "-t", "ed25519", "-N", "", "-C", "sparrow-test", "-f", k)
	}
	d.hostPub = hostKey + ".pub"
	pub, err := os.ReadFile(d.userKey + ".pub")
	must(t, err)
	auth := filepath.Join(d.dir, "authorized_keys")
	must(t, os.WriteFile(auth, pub, 0o600))
	d.port = freePort(t)
	cfg := filepath.Join(d.dir, "sshd_config")
	must(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
PermitUserEnvironment no
AcceptEnv *
MaxSessions 50
`, d.port, hostKey, auth, filepath.Join(d.dir, "sshd.pid"))), 0o600))
	d.start(t, cfg, true)
	t.Cleanup(d.stop)
	return d
}

var privsepRE = regexp.MustCompile(`Missing privilege separation directory: (\S+)`)

// start runs sshd and waits for its port. Run as root, sshd needs its
// privilege separation directory (created by the package's service,
// which a container never started); it is created once, as the service
// would.
func (d *sshd) start(t *testing.T, cfg string, retry bool) {
	t.Helper()
	d.cmd = exec.Command(d.sshdPath, "-D", "-e", "-f", cfg)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	must(t, d.cmd.Start())
	exited := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			if m := privsepRE.FindStringSubmatch(d.log.String()); m != nil && retry && os.Geteuid() == 0 {
				must(t, os.MkdirAll(m[1], 0o755))
				d.log.Reset()
				d.start(t, cfg, false)
				return
			}
			t.Fatalf("sshd exited: %s", d.log.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(d.port)), time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("sshd did not listen on port %d: %s", d.port, d.log.String())
}

// stop kills the server; sessions it forked end with their connections.
func (d *sshd) stop() {
	d.stopOnce.Do(func() {
		if d.cmd != nil && d.cmd.Process != nil {
			_ = d.cmd.Process.Kill()
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// trust adds the server's host key to file the way the README says: with
// ssh-keyscan, after checking its fingerprint against the host's own.
func (d *sshd) trust(t *testing.T, file string) {
	t.Helper()
	scanned := run(t, d.keyscan, "-t", "ed25519", "-p", strconv.Itoa(d.port), "127.0.0.1")
	must(t, os.MkdirAll(filepath.Dir(file), 0o700))
	must(t, os.WriteFile(file, []byte(scanned), 0o600))
	want := strings.Fields(run(t, d.keygen, "-lf", d.hostPub))[1]
	if got := run(t, d.keygen, "-lf", file); !strings.Contains(got, want) {
		t.Fatalf("scanned key %q does not have the host's fingerprint %s", got, want)
	}
}

// fixture is a backend configured for the test server, a workspace and
// the remote base directory (the same machine, so the test can look).
type fixture struct {
	b      *SSH
	d      *sshd
	ws     string
	remote string
	state  string
}

func newFixture(t *testing.T, extra map[string]any) *fixture {
	t.Helper()
	f := &fixture{d: startSSHD(t), ws: t.TempDir(), state: t.TempDir()}
	f.remote = filepath.Join(t.TempDir(), "remote")
	f.d.trust(t, filepath.Join(f.state, "ssh", "known_hosts"))
	f.b = New()
	v := map[string]any{
		"host": "127.0.0.1", "port": f.d.port, "user": f.d.user, "identity_file": f.d.userKey,
		"ssh_config": "none", "remote_dir": f.remote, "timeout": "1m",
	}
	for k, x := range extra {
		v[k] = x
	}
	f.configure(t, v)
	must(t, os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("hello\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("KEY=secret\n"), 0o600))
	t.Cleanup(f.b.Cleanup)
	return f
}

func (f *fixture) configure(t *testing.T, v map[string]any) {
	t.Helper()
	raw, err := json.Marshal(v)
	must(t, err)
	must(t, f.b.Configure(context.Background(), plugin.Config{Values: raw, StateDir: f.state}))
}

func policy() sandbox.Policy {
	return sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env"},
		EnvAllowlist: []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER", "SPARROW_TEST_SECRET", "SSH_AUTH_SOCK"}}
}

func (f *fixture) prepare(t *testing.T) (sandbox.Session, *session) {
	t.Helper()
	s, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "run", Workspace: f.ws, Policy: policy()})
	if err != nil {
		t.Fatalf("prepare: %v\nsshd: %s", err, f.d.log.String())
	}
	sess, _ := f.b.session(s.ID)
	return s, sess
}

func (f *fixture) exec(t *testing.T, req sandbox.ExecRequest, stdin string) (sandbox.Exit, string, string) {
	t.Helper()
	var out, errOut syncBuffer
	sio := sandbox.IO{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		sio.Stdin = strings.NewReader(stdin)
	}
	exit, err := f.b.Exec(context.Background(), req, sio)
	if err != nil {
		t.Fatal(err)
	}
	return exit, out.String(), errOut.String()
}

// ssh runs the ssh client against the test server with the session's
// options, outside the backend.
func (f *fixture) ssh(t *testing.T, s *session, extra []string, remote string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := f.b.command(ctx, s.cfg, s.control, asClient, extra, remote)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, errOut.String())
	}
	return out.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a
// command's stdout and stderr copiers and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
