//go:build unix

package ssh

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// otherKey writes a known_hosts entry for the test server with a key it
// does not have.
func (f *fixture) otherKey(t *testing.T, file string) {
	t.Helper()
	k := filepath.Join(t.TempDir(), "other")
	run(t, f.d.keygen, "-q", "-t", "ed25519", "-N", "", "-f", k)
	pub, err := os.ReadFile(k + ".pub")
	must(t, err)
	fields := strings.Fields(string(pub))
	line := "[127.0.0.1]:" + strconv.Itoa(f.d.port) + " " + fields[0] + " " + fields[1] + "\n"
	must(t, os.WriteFile(file, []byte(line), 0o600))
}

func TestHostKeyRefusedAtPrepare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, f *fixture, kh string)
		config map[string]any
		want   []string
	}{
		{"changed", func(t *testing.T, f *fixture, kh string) { f.otherKey(t, kh) }, nil,
			[]string{"REMOTE HOST IDENTIFICATION HAS CHANGED", "ssh-keygen -f KH -R '[127.0.0.1]:PORT' && ssh-keyscan -p PORT 127.0.0.1 >> KH"}},
		{"unknown", func(t *testing.T, f *fixture, kh string) { must(t, os.WriteFile(kh, nil, 0o600)) }, nil,
			[]string{"127.0.0.1 is not in Sparrow's known_hosts file KH", "ssh-keyscan -p PORT 127.0.0.1 >> KH", "accept_new_host_key = true"}},
		{"unknown, user config says no checking", func(t *testing.T, f *fixture, kh string) {
			must(t, os.WriteFile(kh, nil, 0o600))
		}, map[string]any{"ssh_config": "CONFIG"},
			[]string{"127.0.0.1 is not in Sparrow's known_hosts file KH"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			kh := filepath.Join(f.state, "ssh", "known_hosts")
			tc.setup(t, f, kh)
			if tc.config != nil {
				cfgFile := filepath.Join(t.TempDir(), "config")
				must(t, os.WriteFile(cfgFile, []byte("Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  GlobalKnownHostsFile /dev/null\n"), 0o600))
				f.configure(t, map[string]any{"host": "127.0.0.1", "port": f.d.port, "user": f.d.user, "identity_file": f.d.userKey,
					"ssh_config": cfgFile, "remote_dir": f.remote})
			}
			_, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: policy()})
			if !errors.Is(err, ErrHostKey) {
				t.Fatalf("prepare: %v", err)
			}
			for _, w := range tc.want {
				w = strings.NewReplacer("KH", kh, "PORT", strconv.Itoa(f.d.port)).Replace(w)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if _, err := os.Stat(f.remote); err == nil {
				t.Error("something was run: the remote directory exists")
			}
		})
	}
}

func TestHostKeyChangedMidSession(t *testing.T) {
	f := newFixture(t, nil)
	s, sess := f.prepare(t)
	kh := filepath.Join(f.state, "ssh", "known_hosts")
	f.otherKey(t, kh)
	f.b.closeMaster(sess) // the next command connects anew
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo ran; touch ran"}}, "")
	if exit.Code != 127 || out != "" || !strings.Contains(errOut, "REMOTE HOST IDENTIFICATION HAS CHANGED") || !strings.Contains(errOut, kh) {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(s.Workdir, "ran")); err == nil {
		t.Fatal("the command ran on a host with a changed key")
	}
}

func TestAcceptNewHostKey(t *testing.T) {
	f := newFixture(t, map[string]any{"accept_new_host_key": true})
	kh := filepath.Join(f.state, "ssh", "known_hosts")
	must(t, os.Remove(kh))
	s, _ := f.prepare(t)
	b, err := os.ReadFile(kh)
	if err != nil || !strings.Contains(string(b), "ssh-ed25519") {
		t.Fatalf("known_hosts after first contact: %q %v", b, err)
	}
	if exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	// accept-new never accepts a changed key.
	f.otherKey(t, kh)
	_, err = f.b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r2", Workspace: f.ws, Policy: policy()})
	if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "HAS CHANGED") {
		t.Fatalf("changed key with accept_new_host_key: %v", err)
	}
}

func TestConnectionLost(t *testing.T) {
	f := newFixture(t, nil)
	s, sess := f.prepare(t)
	f.d.stop()
	f.b.closeMaster(sess)
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "sparrow: ssh: could not reach 127.0.0.1 over ssh") || !strings.Contains(errOut, "Connection refused") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	if _, err := f.b.Teardown(context.Background(), s.ID); err == nil || !strings.Contains(err.Error(), sess.dir) {
		t.Errorf("teardown of an unreachable host: %v (want an error naming %s)", err, sess.dir)
	}
}

func TestLoginRefused(t *testing.T) {
	f := newFixture(t, nil)
	k := filepath.Join(t.TempDir(), "stranger")
	run(t, f.d.keygen, "-q", "-t", "ed25519", "-N", "", "-f", k)
	f.configure(t, map[string]any{"host": "127.0.0.1", "port": f.d.port, "user": f.d.user, "identity_file": k,
		"ssh_config": "none", "remote_dir": f.remote})
	_, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: policy()})
	if err == nil || !strings.Contains(err.Error(), "ssh could not log in to 127.0.0.1 (") || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("prepare: %v", err)
	}
}
