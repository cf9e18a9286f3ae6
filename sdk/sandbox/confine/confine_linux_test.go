package confine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestMain(m *testing.M) {
	Init()
	os.Exit(m.Run())
}

var (
	probeOnce sync.Once
	probed    Report
)

// report probes once per test binary; tests that need the primitives
// fail (not skip) when they are missing, since CI installs bubblewrap.
func report(t *testing.T) Report {
	t.Helper()
	probeOnce.Do(func() { probed = Probe(context.Background()) })
	if !probed.Usable() {
		t.Fatalf("confinement unavailable here: %s", probed)
	}
	return probed
}

// run confines `sh -c script` in a fresh workspace and returns its
// combined output and exit code.
func run(t *testing.T, spec Spec, script string) (string, int) {
	t.Helper()
	rep := report(t)
	spec.System = true
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
		spec.ReadWrite = append(spec.ReadWrite, spec.Dir)
	}
	if spec.Env == nil {
		spec.Env = []string{"PATH=/usr/bin:/bin"}
	}
	spec.Argv = []string{"sh", "-c", script}
	cmd, err := Command(spec, rep)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	defer cmd.Cleanup()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out.String(), code
}

func TestConfinedBasics(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=hunter2"), 0o600)
	os.Mkdir(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]"), 0o644)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("outside-secret"), 0o644)
	spec := Spec{Dir: ws, ReadWrite: []string{ws}, Hidden: []string{filepath.Join(ws, ".env")}, Protected: []string{filepath.Join(ws, ".git")}}
	out, code := run(t, spec, `
echo hi > file && cat file
cat .env; echo "env=[$(cat .env)]"
echo x >> .git/config && echo WROTE-GIT
cat .git/config; echo
cat `+outside+`/secret
id -u; ls /proc | grep -c '^[0-9]' 
cat /etc/shadow
echo "$(env | wc -l) vars"
`)
	t.Logf("exit %d\n%s", code, out)
	for _, bad := range []string{"hunter2", "WROTE-GIT", "outside-secret"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q", bad)
		}
	}
	if !strings.Contains(out, "hi") {
		t.Errorf("workspace write/read failed")
	}
}

func TestConfinedScratch(t *testing.T) {
	out, code := run(t, Spec{Limits: Limits{Pids: 32, MemoryBytes: 64 << 20}}, `
perl -e 'require "syscall.ph"; $r = syscall(101, 0, 1, 0, 0); print "ptrace=$r err=$!\n"'
perl -e '$r = syscall(250, 0, 0, 0, 0, 0); print "keyctl=$r err=$!\n"'
cat /proc/self/status | grep -i -E "seccomp|NoNewPrivs"
for i in $(seq 1 60); do sleep 5 & done 2>&1 | tail -1
perl -e '$x = "a" x (200*1024*1024); print "allocated\n"'; echo "perl exit $?"
cat /proc/self/cgroup | head -3
exec 3<>/dev/tcp/127.0.0.1/22 2>&1 || echo no-net
ls /dev
`)
	t.Logf("exit %d\n%s", code, out)
}

func TestBwrapArgs(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(ws, "config", "prod.env")
	os.MkdirAll(filepath.Dir(secret), 0o755)
	os.WriteFile(secret, []byte("x"), 0o600)
	os.Symlink("config/prod.env", filepath.Join(ws, ".env"))
	base := Spec{Dir: ws, ReadWrite: []string{ws}, Hidden: []string{filepath.Join(ws, ".env"), filepath.Join(ws, "missing")}}
	has := func(args []string, seq ...string) bool {
		for i := range args {
			if i+len(seq) <= len(args) && slices.Equal(args[i:i+len(seq)], seq) {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		name    string
		userns  bool
		network bool
		want    [][]string
		notWant [][]string
	}{
		{"user namespace, no network", true, false,
			[][]string{{"--unshare-user", "--disable-userns"}, {"--unshare-net"}, {"--bind", ws, ws}, {"--ro-bind-data"}},
			nil},
		{"setuid bubblewrap", false, false,
			[][]string{{"--unshare-net"}},
			[][]string{{"--unshare-user"}, {"--disable-userns"}}},
		{"network allowed", true, true,
			nil,
			[][]string{{"--unshare-net"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cmd{}
			spec := base
			spec.Network = tc.network
			args, err := c.bwrapArgs(spec, tc.userns, &initPlan{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Cleanup()
			for _, w := range tc.want {
				if !has(args, w...) {
					t.Errorf("args lack %q:\n%q", w, args)
				}
			}
			for _, w := range tc.notWant {
				if has(args, w...) {
					t.Errorf("args have %q:\n%q", w, args)
				}
			}
			// The symlink's target is hidden, not just the link.
			if !slices.Contains(args, secret) {
				t.Errorf("the .env symlink's target %s is not hidden:\n%q", secret, args)
			}
			if slices.Contains(args, filepath.Join(ws, "missing")) {
				t.Errorf("a missing hidden path was mounted")
			}
		})
	}
}

func TestCheckInit(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckInit(context.Background(), self); err != nil {
		t.Errorf("this package's own init refused: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/bin/true", `speaks "", this plugin "` + initProtocol + `"`},
		{"bin/init", "is not an absolute path"},
		{"/no/such/init", "no such file"},
	} {
		if err := CheckInit(context.Background(), tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckInit(%s) = %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
}
