//go:build unix

package ssh

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func configure(t *testing.T, b *SSH, state string, v map[string]any) error {
	t.Helper()
	raw, err := json.Marshal(v)
	must(t, err)
	return b.Configure(context.Background(), plugin.Config{Values: raw, StateDir: state})
}

func TestOptions(t *testing.T) {
	b := New()
	b.getenv = func(k string) string { return map[string]string{"HOME": "/home/me"}[k] }
	must(t, configure(t, b, "/state", map[string]any{
		"host": "build", "user": "ci", "port": 2222, "identity_file": "~/.ssh/id_sparrow", "connect_timeout": "2500ms",
	}))
	cfg := b.settings()
	want := []string{"-T", "-e", "none",
		"-o", "IgnoreUnknown=KnownHostsCommand",
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=/state/ssh/known_hosts",
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
		"-o", "ConnectTimeout=3",
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=3",
		"-o", "ControlPath=/state/ssh/cm/0123456789abcdef",
		"-o", "ControlMaster=yes",
		"-o", "ControlPersist=60s",
		"-l", "ci",
		"-p", "2222",
		"-i", "/home/me/.ssh/id_sparrow", "-o", "IdentitiesOnly=yes",
	}
	if d := cmp.Diff(want, cfg.options("/state/ssh/cm/0123456789abcdef", asMaster)); d != "" {
		t.Errorf("master options (-want +got):\n%s", d)
	}
	must(t, configure(t, b, "/state", map[string]any{"host": "build", "accept_new_host_key": true, "ssh_config": "none", "known_hosts": "/k h/known"}))
	got := b.settings().options("/s", asClient)
	want = []string{"-F", "none", "-T", "-e", "none", "-o", "IgnoreUnknown=KnownHostsCommand", "-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=accept-new", "-o", `UserKnownHostsFile="/k h/known"`}
	if d := cmp.Diff(want, got[:len(want)]); d != "" {
		t.Errorf("client options (-want +got):\n%s", d)
	}
	if strings.Contains(strings.Join(got, " "), "ControlPersist") || got[len(got)-1] != "ControlMaster=no" {
		t.Errorf("client options end %q", got[len(got)-4:])
	}
}

// The options Sparrow relies on are understood by the installed ssh, and
// win over a config file that says otherwise (ssh -G prints the result).
func TestOptionsWinOverConfigFile(t *testing.T) {
	_, _, _, sshPath := tools(t)
	state := t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "config")
	must(t, os.WriteFile(cfgFile, []byte("Host alias\n  HostName 127.0.0.9\n  Port 2200\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  ForwardAgent yes\n  BatchMode no\n  ControlMaster auto\n"), 0o600))
	b := New()
	must(t, configure(t, b, state, map[string]any{"host": "alias", "ssh_config": cfgFile, "ssh": sshPath}))
	out, err := b.command(context.Background(), b.settings(), "/tmp/x", asClient, []string{"-G"}, "").Output()
	if err != nil {
		t.Fatalf("ssh -G: %v", err)
	}
	for _, want := range []string{"hostname 127.0.0.9", "port 2200", "stricthostkeychecking true", "userknownhostsfile " + filepath.Join(state, "ssh", "known_hosts"),
		"forwardagent no", "batchmode yes", "controlmaster false", "globalknownhostsfile /dev/null"} {
		if !strings.Contains(string(out), "\n"+want+"\n") {
			t.Errorf("ssh -G lacks %q", want)
		}
	}
}

func TestConfigureRejects(t *testing.T) {
	for _, tc := range []struct {
		v    map[string]any
		want string
	}{
		{map[string]any{"host": "-oProxyCommand=x"}, "must not start with '-'"},
		{map[string]any{"host": "me@h", "user": "you"}, `host "me@h" names a user and user = "you" names another`},
		{map[string]any{"host": "h", "port": 70000}, "port 70000"},
		{map[string]any{"host": "h", "remote_dir": "rel/dir"}, "remote_dir \"rel/dir\": want an absolute path"},
		{map[string]any{"host": "h", "remote_dir": "~/"}, "want a directory below"},
		{map[string]any{"host": "h", "remote_dir": "/a/../.."}, "without .."},
		{map[string]any{"host": "h", "timeout": "0s"}, "timeout \"0s\""},
		{map[string]any{"host": "h", "connect_timeout": "10ms"}, "connect_timeout"},
		{map[string]any{"host": "h", "known_hosts": "/a%d/kh"}, "ssh cannot take a path"},
		{map[string]any{"host": "h", "identity_file": "relative/key"}, "identity_file: \"relative/key\""},
	} {
		err := configure(t, New(), "/state", tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.v, err, tc.want)
		}
	}
	// Every problem at once.
	err := configure(t, New(), "/state", map[string]any{"host": "h", "port": -1, "timeout": "x", "max_output_bytes": 0})
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("joined errors: %v", err)
	}
}

func TestUnavailable(t *testing.T) {
	state := t.TempDir()
	ws := t.TempDir()
	prep := func(b *SSH) error {
		_, err := b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: ws, Policy: sandbox.Policy{AllowNetwork: true}})
		return err
	}
	b := New()
	c, err := b.Capabilities(context.Background())
	if err != nil || c.Available || c.UnavailableReason != fixHost || !c.Remote || !c.FilesystemIsolation || c.NetworkControl || c.PersistentWorkspace {
		t.Fatalf("unconfigured: %+v %v", c, err)
	}
	if err := prep(b); err == nil || !strings.Contains(err.Error(), fixHost) {
		t.Errorf("prepare unconfigured: %v", err)
	}
	must(t, configure(t, b, state, map[string]any{"host": "h", "ssh": "/nonexistent/ssh"}))
	if c, _ := b.Capabilities(context.Background()); c.Available || c.UnavailableReason != fixInstall {
		t.Errorf("no ssh: %+v", c)
	}
	if err := prep(b); err == nil || !strings.Contains(err.Error(), fixInstall) {
		t.Errorf("prepare without ssh: %v", err)
	}
	b.getenv = func(string) string { return t.TempDir() } // PATH without ssh
	must(t, configure(t, b, state, map[string]any{"host": "h"}))
	if c, _ := b.Capabilities(context.Background()); c.Available || c.UnavailableReason != fixInstall {
		t.Errorf("ssh not on PATH: %+v", c)
	}
	b = New()
	must(t, configure(t, b, state, map[string]any{"host": "h", "identity_file": "/nonexistent/key"}))
	if c, _ := b.Capabilities(context.Background()); c.Available || !strings.Contains(c.UnavailableReason, "identity_file /nonexistent/key does not exist") {
		t.Errorf("missing key: %+v", c)
	}
	b = New()
	must(t, configure(t, b, "", map[string]any{"host": "h"}))
	if c, _ := b.Capabilities(context.Background()); c.Available || !strings.Contains(c.UnavailableReason, "set known_hosts") {
		t.Errorf("no state dir: %+v", c)
	}
	if _, err := exec.LookPath("ssh"); err == nil {
		b = New()
		must(t, configure(t, b, state, map[string]any{"host": "h"}))
		if c, _ := b.Capabilities(context.Background()); !c.Available {
			t.Errorf("configured: %+v", c)
		}
		// Policies this backend cannot honour are refused before connecting.
		_, err := b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: ws, Policy: sandbox.Policy{}})
		if err == nil || !strings.Contains(err.Error(), "cannot block network access") {
			t.Errorf("network denied: %v", err)
		}
		_, err = b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: ws, Policy: sandbox.Policy{AllowNetwork: true, ReadOnlyPaths: []string{"/x"}}})
		if err == nil || !strings.Contains(err.Error(), "cannot enforce read-only paths") {
			t.Errorf("read-only: %v", err)
		}
	}
}

func TestRemoteBaseAndIDs(t *testing.T) {
	home := t.TempDir()
	for dir, want := range map[string]string{"~/.sparrow/sessions": home + "/.sparrow/sessions", "/srv/it's": "/srv/it's", "~/a b/": home + "/a b"} {
		cmd := exec.Command("sh", "-c", `printf %s `+remoteBase(dir))
		cmd.Env = []string{"HOME=" + home}
		out, err := cmd.Output()
		if err != nil || string(out) != want {
			t.Errorf("%s: %q %v, want %q", dir, out, err, want)
		}
	}
	for run, prefix := range map[string]string{"": "ssh-", "run 1/../x": "run_1_.._x-", "..hidden": "hidden-"} {
		if id := newID(run); !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+12 {
			t.Errorf("newID(%q) = %q", run, id)
		}
	}
	long := controlDir("/" + strings.Repeat("x", 90))
	if len(controlPath(long, "id"))+socketTemp > maxSocketPath || !strings.HasPrefix(long, os.TempDir()) {
		t.Errorf("long state dir: control dir %s", long)
	}
	if d := controlDir("/state"); d != "/state/ssh/cm" {
		t.Errorf("control dir %s", d)
	}
}
