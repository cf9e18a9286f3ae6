//go:build linux

package localhardened

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// The test binary is each sandbox's init, as the plugin binary is.
func TestMain(m *testing.M) {
	confine.Init()
	os.Exit(m.Run())
}

// hostEnv is the plugin's own environment in tests: the real PATH, a home,
// and variables a command must not see.
func hostEnv(home string) func(string) string {
	return func(k string) string {
		switch k {
		case "PATH":
			return "/usr/local/bin:/usr/bin:/bin"
		case "HOME":
			return home
		case "SECRET_TOKEN":
			return "leaked-token"
		}
		return ""
	}
}

// prepared returns a backend with a session on a fresh git workspace
// holding a .env, and the host home it hides.
func prepared(t *testing.T, p sandbox.Policy) (*Hardened, sandbox.Session) {
	t.Helper()
	return preparedWith(t, New(), p)
}

// preparedWith is prepared for a backend the caller made: h probes with
// its own getenv, then gets the test's environment.
func preparedWith(t *testing.T, h *Hardened, p sandbox.Policy) (*Hardened, sandbox.Session) {
	t.Helper()
	if rep := h.probe(context.Background()); !rep.Usable() {
		t.Fatalf("local-hardened cannot run on this machine (CI installs bubblewrap): %s", rep)
	}
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("home-private-key"), 0o600))
	h.getenv = hostEnv(home)
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=env-secret"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello"), 0o644))
	git(t, ws, "add", "main.txt")
	git(t, ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
	if p.DeniedPaths == nil {
		p.DeniedPaths = []string{".git", ".env", ".ssh", "id_rsa"}
	}
	p.ReadWritePaths = append([]string{ws}, p.ReadWritePaths...)
	s, err := h.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: ws, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sh runs a shell script in the session and returns exit, stdout, stderr.
func sh(t *testing.T, h *Hardened, s sandbox.Session, req sandbox.ExecRequest, script string) (sandbox.Exit, string, string) {
	t.Helper()
	req.SessionID = s.ID
	req.Argv = []string{"sh", "-c", script}
	var out, errOut strings.Builder
	exit, err := h.Exec(context.Background(), req, sandbox.IO{Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	return exit, out.String(), errOut.String()
}

func TestCapabilitiesNameTheProtections(t *testing.T) {
	h := New()
	c, err := h.Capabilities(context.Background())
	must(t, err)
	if !c.Available || !c.NetworkControl || !c.FilesystemIsolation || !c.ResourceLimits {
		t.Fatalf("capabilities = %+v", c)
	}
	joined := strings.Join(c.Protections, "; ")
	for _, want := range []string{"namespaces", "seccomp", "no_new_privs", "rlimits"} {
		if !strings.Contains(joined, want) {
			t.Errorf("protections %q lack %q", joined, want)
		}
	}
}

func TestWorkspaceWorksAndNothingElseOfTheHost(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{EnvAllowlist: []string{"PATH", "HOME"}})
	exit, out, errOut := sh(t, h, s, sandbox.ExecRequest{}, `
cat main.txt; echo
echo new > made.txt
git log --oneline | wc -l
cat "$HOME/.ssh/id_rsa" 2>/dev/null || echo no-home-key
echo "[$(cat .env)]"
env | grep -c SECRET_TOKEN
echo x >> .git/config 2>/dev/null || echo git-readonly
exit 3`)
	if exit.Code != 3 {
		t.Fatalf("exit = %+v, stderr %s", exit, errOut)
	}
	want := "hello\n1\nno-home-key\n[]\n0\ngit-readonly\n"
	if out != want {
		t.Errorf("stdout = %q, want %q (stderr %s)", out, want, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(s.Workdir, "made.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("workspace write did not reach the host: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Workdir, ".env")); string(b) != "TOKEN=env-secret" {
		t.Errorf(".env changed on the host: %q", b)
	}
}

func TestDeniedPathsCreatedByACommandAreRemoved(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	must(t, os.Mkdir(filepath.Join(s.Workdir, "keep"), 0o755))
	exit, _, errOut := sh(t, h, s, sandbox.ExecRequest{}, `
git init -q sub && mkdir -p sub/.git/hooks && printf '#!/bin/sh\necho pwned\n' > sub/.git/hooks/pre-commit
mkdir -p keep && printf 'gitdir: /tmp/evil\n' > keep/.git
echo ok > plain.txt`)
	if exit.Code != 0 {
		t.Fatalf("exit = %+v, stderr %s", exit, errOut)
	}
	for _, p := range []string{"sub/.git", "keep/.git"} {
		if _, err := os.Lstat(filepath.Join(s.Workdir, p)); err == nil {
			t.Errorf("%s is still on the host", p)
		}
		if !strings.Contains(errOut, "removed "+p) {
			t.Errorf("stderr does not say %s was removed: %s", p, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Workdir, "plain.txt")); err != nil {
		t.Errorf("ordinary file lost: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Workdir, ".git", "HEAD")); err != nil {
		t.Errorf("the workspace's own .git was touched: %v", err)
	}
}

// hostService listens on the host's loopback and greets each connection
// with "host-service"; it stops when the test ends.
func hostService(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("host-service\n"))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// connectScript prints what a service on the host's loopback port says,
// or "refused".
func connectScript(port int) string {
	return fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3' 2>/dev/null || echo refused`, port)
}

func TestNetworkOnlyWhenAllowed(t *testing.T) {
	script := connectScript(hostService(t))
	for _, tc := range []struct {
		allow bool
		want  string
	}{{false, "refused\n"}, {true, "host-service\n"}} {
		h, s := prepared(t, sandbox.Policy{})
		_, out, errOut := sh(t, h, s, sandbox.ExecRequest{AllowNetwork: tc.allow}, script)
		if out != tc.want {
			t.Errorf("allow=%v: stdout %q, want %q (stderr %s)", tc.allow, out, tc.want, errOut)
		}
	}
}

func TestLimits(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	marker := fmt.Sprintf("sparrow-limit-%d", time.Now().UnixNano())
	cases := []struct {
		name   string
		limits sandbox.Limits
		script string
		check  func(t *testing.T, exit sandbox.Exit, out, errOut string)
	}{
		{"timeout kills the tree", sandbox.Limits{Timeout: 500 * time.Millisecond},
			`(sleep 30; echo ` + marker + `) & sleep 30`,
			func(t *testing.T, exit sandbox.Exit, out, _ string) {
				if !exit.TimedOut || exit.Code != 124 {
					t.Errorf("exit = %+v", exit)
				}
				if o, _ := exec.Command("pgrep", "-f", marker).Output(); len(o) > 0 {
					t.Errorf("a process outlived the command: %s", o)
				}
			}},
		{"fork bomb", sandbox.Limits{MaxPids: 32, Timeout: 20 * time.Second},
			`i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done 2>/dev/null; echo spawned $i`,
			func(t *testing.T, exit sandbox.Exit, out, errOut string) {
				if strings.Contains(out, "spawned 100") && exit.Code == 0 && !strings.Contains(errOut, "fork") {
					t.Errorf("100 processes started under a limit of 32: %q %q", out, errOut)
				}
			}},
		{"memory", sandbox.Limits{MemoryBytes: 64 << 20},
			`perl -e '$x = "a" x (256*1024*1024); print "allocated\n"'`,
			func(t *testing.T, exit sandbox.Exit, out, _ string) {
				if exit.Code == 0 || strings.Contains(out, "allocated") {
					t.Errorf("256M allocated under 64M: %+v %q", exit, out)
				}
			}},
		{"disk", sandbox.Limits{DiskBytes: 4 << 20},
			`head -c 16777216 /dev/zero > big; head -c 16777216 /dev/zero > /tmp/big; ls -l big /tmp/big`,
			func(t *testing.T, _ sandbox.Exit, _, errOut string) {
				if fi, err := os.Stat(filepath.Join(s.Workdir, "big")); err == nil && fi.Size() > 4<<20 {
					t.Errorf("wrote %d bytes under a 4M disk limit", fi.Size())
				}
			}},
		{"output", sandbox.Limits{MaxOutputBytes: 1 << 16},
			`head -c 10000000 /dev/zero | tr '\0' x`,
			func(t *testing.T, exit sandbox.Exit, out, _ string) {
				if !exit.OutputTruncated || len(out) > 1<<16 {
					t.Errorf("output %d bytes, exit %+v", len(out), exit)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exit, out, errOut := sh(t, h, s, sandbox.ExecRequest{Limits: tc.limits}, tc.script)
			tc.check(t, exit, out, errOut)
		})
	}
}

func TestUnavailableSaysWhatIsMissing(t *testing.T) {
	h := New()
	h.probed = true
	h.report = confine.Report{Missing: []string{"bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"}}
	c, err := h.Capabilities(context.Background())
	must(t, err)
	if c.Available || !strings.Contains(c.UnavailableReason, "apt-get install bubblewrap") {
		t.Errorf("capabilities = %+v", c)
	}
	if _, err := h.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("prepare = %v", err)
	}
	var errOut strings.Builder
	exit, err := h.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"true"}, Workdir: t.TempDir()}, sandbox.IO{Stderr: &errOut})
	if err != nil || exit.Code != sandbox.ExitUnsupported || !strings.Contains(errOut.String(), "bubblewrap") {
		t.Errorf("exec = %+v %v %q", exit, err, errOut.String())
	}
}

func TestDirectoriesHoldingDeniedPathsCannotBeMoved(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	ws := s.Workdir
	git(t, filepath.Join(ws), "init", "-q", "nested")
	must(t, os.MkdirAll(filepath.Join(ws, "deploy", "keys"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "deploy", "keys", "id_rsa"), []byte("deploy-key"), 0o600))
	exit, out, errOut := sh(t, h, s, sandbox.ExecRequest{}, `
mv nested n2 2>/dev/null && echo moved-repo
mv deploy d2 2>/dev/null && echo moved-deploy
mv deploy/keys deploy/k2 2>/dev/null && echo moved-keys
mv nested/.git nested/g2 2>/dev/null && echo moved-git
echo done`)
	if exit.Code != 0 || out != "done\n" {
		t.Fatalf("exit %+v, stdout %q, stderr %s", exit, out, errOut)
	}
	for _, p := range []string{"nested/.git/HEAD", "deploy/keys/id_rsa"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("%s moved on the host: %v", p, err)
		}
	}
}

func TestHomeKeepsCachesBetweenCommandsButIsNotTheUsers(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	h.stateDir = t.TempDir()
	exit, _, errOut := sh(t, h, s, sandbox.ExecRequest{}, `mkdir -p "$HOME/.cache/go-build" && echo cached > "$HOME/.cache/go-build/entry"; ls -A "$HOME"`)
	if exit.Code != 0 {
		t.Fatalf("exit %+v: %s", exit, errOut)
	}
	_, out, _ := sh(t, h, s, sandbox.ExecRequest{}, `cat "$HOME/.cache/go-build/entry"; cat "$HOME/.ssh/id_rsa" 2>/dev/null || echo no-user-key`)
	if out != "cached\nno-user-key\n" {
		t.Errorf("second command saw %q", out)
	}
	homes, _ := filepath.Glob(filepath.Join(h.stateDir, "local-hardened", "homes", "*", ".cache", "go-build", "entry"))
	if len(homes) != 1 {
		t.Errorf("the sandbox home is not under the state directory: %v", homes)
	}
	if _, err := os.Stat(filepath.Join(h.getenv("HOME"), ".cache")); err == nil {
		t.Errorf("the command wrote into the user's home")
	}
}

func TestSignalsReachTheCommand(t *testing.T) {
	h, s := prepared(t, sandbox.Policy{})
	signals := make(chan string, 1)
	var out strings.Builder
	pr, pw := io.Pipe()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		// Send INT once the command says it is ready.
		buf := make([]byte, 64)
		n, _ := pr.Read(buf)
		out.Write(buf[:n])
		signals <- "INT"
		io.Copy(&out, pr)
	}()
	exit, err := h.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Limits: sandbox.Limits{Timeout: 20 * time.Second},
		Argv: []string{"sh", "-c", `trap 'echo got-int; exit 3' INT; echo ready; sleep 15 & wait`}},
		sandbox.IO{Stdout: pw, Signals: signals})
	pw.Close()
	<-copied
	if err != nil {
		t.Fatal(err)
	}
	if exit.Code != 3 || exit.TimedOut || !strings.Contains(out.String(), "got-int") {
		t.Errorf("exit %+v, stdout %q: the command's trap did not run", exit, out.String())
	}
}
