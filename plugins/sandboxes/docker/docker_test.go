//go:build linux

package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestRunCommandLines(t *testing.T) {
	user := fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	start := []string{"--entrypoint", "sh"}
	script := []string{"-c", "echo sparrow-ready; exec cat >/dev/null"}
	tests := []struct {
		name   string
		config map[string]any
		policy sandbox.Policy
		// setup adds files to the workspace.
		setup func(t *testing.T, ws string)
		// want is the docker run argv after the labels and user, with WS
		// standing for the workspace.
		want []string
	}{{
		name:   "defaults: no network; denied file and directory masked",
		policy: policy(),
		want: slices.Concat([]string{"--network", "none", "--pids-limit", "4096", "--pull", "missing",
			"--mount", "type=bind,src=WS,dst=/workspace",
			"--mount", "type=bind,src=/dev/null,dst=/workspace/.env,readonly",
			"--mount", "type=tmpfs,dst=/workspace/.git,readonly"}, start, []string{"debian:12-slim"}, script),
	}, {
		name:   "network allowed; limits; image; workdir; read-only paths",
		config: map[string]any{"image": "alpine:3.20", "pull": "never", "workdir": "/src", "cpus": "1.5", "memory": "512m", "pids_limit": 100},
		policy: sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{"id_rsa"}, ReadOnlyPaths: []string{"docs", "WS/README.md", "/etc", "docs/inner"}},
		setup: func(t *testing.T, ws string) {
			must(t, os.MkdirAll(filepath.Join(ws, "docs", "inner"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "README.md"), nil, 0o644))
			must(t, os.MkdirAll(filepath.Join(ws, "keys"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "keys", "id_rsa"), nil, 0o600))
		},
		want: slices.Concat([]string{"--cpus", "1.5", "--memory", "512m", "--memory-swap", "512m", "--pids-limit", "100", "--pull", "never",
			"--mount", "type=bind,src=WS,dst=/src",
			"--mount", "type=bind,src=WS/README.md,dst=/src/README.md,readonly",
			"--mount", "type=bind,src=WS/docs,dst=/src/docs,readonly",
			"--mount", "type=bind,src=/dev/null,dst=/src/keys/id_rsa,readonly"}, start, []string{"alpine:3.20"}, script),
	}, {
		name:   "no limits; whole workspace read-only",
		config: map[string]any{"pids_limit": 0},
		policy: sandbox.Policy{AllowNetwork: true, ReadOnlyPaths: []string{"."}},
		want: slices.Concat([]string{"--pull", "missing", "--mount", "type=bind,src=WS,dst=/workspace,readonly"},
			start, []string{"debian:12-slim"}, script),
	}, {
		name:   "denied symlinks; nested denied entries; a comma in a path",
		policy: sandbox.Policy{DeniedPaths: []string{"secret*"}},
		setup: func(t *testing.T, ws string) {
			must(t, os.MkdirAll(filepath.Join(ws, "data"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "data", "plain.txt"), nil, 0o644))
			must(t, os.Symlink("data/plain.txt", filepath.Join(ws, "secret-link")))
			must(t, os.Symlink("/etc/hostname", filepath.Join(ws, "secret-out")))
			must(t, os.Symlink(".", filepath.Join(ws, "secret-self")))
			must(t, os.MkdirAll(filepath.Join(ws, "secretdir", "secret-inner"), 0o755))
			must(t, os.MkdirAll(filepath.Join(ws, "a,b"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "a,b", "secret.txt"), nil, 0o600))
		},
		want: slices.Concat([]string{"--network", "none", "--pids-limit", "4096", "--pull", "missing",
			"--mount", "type=bind,src=WS,dst=/workspace",
			"--mount", `type=bind,src=/dev/null,"dst=/workspace/a,b/secret.txt",readonly`,
			"--mount", "type=bind,src=/dev/null,dst=/workspace/data/plain.txt,readonly",
			"--mount", "type=tmpfs,dst=/workspace/secretdir,readonly"}, start, []string{"debian:12-slim"}, script),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.config != nil {
				f.configure(t, tt.config)
			}
			if tt.setup != nil {
				tt.setup(t, f.ws)
			}
			p := tt.policy
			for i, r := range p.ReadOnlyPaths {
				p.ReadOnlyPaths[i] = strings.ReplaceAll(r, "WS", f.ws)
			}
			s := f.prepare(t, p)
			name := "sparrow-" + s.ID
			want := []string{
				"docker" + bracket("info", "--format", "{{.ServerVersion}}"),
				"docker" + bracket(slices.Concat([]string{"run", "-i", "--rm", "--init", "--name", name,
					"--label", "sparrow.run=run1", "--label", "sparrow.session=" + s.ID, "--user", user}, tt.want)...),
			}
			want[1] = strings.ReplaceAll(want[1], "WS", f.ws)
			if d := cmp.Diff(want, f.log(t)); d != "" {
				t.Errorf("command lines (-want +got):\n%s", d)
			}
			if _, err := f.d.Teardown(context.Background(), s.ID); err != nil {
				t.Fatal(err)
			}
			log := f.log(t)
			if got := log[len(log)-1]; got != "docker"+bracket("rm", "-f", name) {
				t.Errorf("teardown ran %q", got)
			}
			if ev := f.lines(t, "events"); !slices.Equal(ev, []string{"removed " + name}) {
				t.Errorf("container events %q", ev)
			}
		})
	}
}

func TestPrepareSession(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	if s.Workdir != "/workspace" || s.HostWorkspace != "" || !strings.HasPrefix(s.ID, "run1-") {
		t.Errorf("session %+v", s)
	}
	if s2 := f.prepare(t, policy()); s2.ID == s.ID {
		t.Errorf("two sessions share id %s", s.ID)
	}
	c, err := f.d.Capabilities(context.Background())
	want := sandbox.Capabilities{Available: true, NetworkControl: true, FilesystemIsolation: true, ResourceLimits: true, PersistentWorkspace: true}
	if err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("capabilities %+v %v", c, err)
	}
	if got := containerName("20260101T000000Z-ab/c d"); got != "sparrow-20260101T000000Z-ab-c-d" {
		t.Errorf("container name %q", got)
	}
}

func TestPrepareRefusals(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name string
		ws   string
		p    sandbox.Policy
		want string
	}{
		{"relative workspace", "ws", policy(), "is not an absolute path"},
		{"missing workspace", filepath.Join(f.ws, "nope"), policy(), "is not a directory"},
		{"missing read-only path", f.ws, sandbox.Policy{ReadOnlyPaths: []string{"nope"}}, "read-only path nope does not exist"},
	} {
		_, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: tt.ws, Policy: tt.p})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	if runs := strings.Count(strings.Join(f.log(t), "\n"), "[run]"); runs != 0 {
		t.Errorf("%d containers started for refused requests", runs)
	}
	many := sandbox.Policy{DeniedPaths: []string{"*.key"}}
	for i := range maxMounts + 1 {
		must(t, os.WriteFile(filepath.Join(f.ws, fmt.Sprintf("%d.key", i)), nil, 0o600))
	}
	if _, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: many}); err == nil || !strings.Contains(err.Error(), "more than the 256") {
		t.Errorf("too many masks: %v", err)
	}
}

func TestPrepareFailedRun(t *testing.T) {
	f := newFixture(t)
	must(t, os.WriteFile(filepath.Join(f.bin, "noimage"), nil, 0o644))
	_, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: policy()})
	if err == nil || !strings.Contains(err.Error(), "docker: prepare: docker run debian:12-slim: exit status 125: docker: Error response from daemon: pull access denied for nosuch") {
		t.Fatalf("error %v", err)
	}
	if len(f.d.sessions) != 0 || len(f.d.starting) != 0 {
		t.Errorf("a failed Prepare left %d sessions, %d starting", len(f.d.sessions), len(f.d.starting))
	}
}

func TestStartTimeout(t *testing.T) {
	f := newFixture(t)
	f.configure(t, map[string]any{"start_timeout": "300ms"})
	// A main process that never says it runs.
	script := strings.Replace(fakeDocker, `sh -c "$last"`, `cat >/dev/null`, 1)
	must(t, os.WriteFile(filepath.Join(f.bin, "docker"), []byte(f.script(t, script)), 0o755))
	began := time.Now()
	_, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: policy()})
	if err == nil || !strings.Contains(err.Error(), "did not start within 300ms") || time.Since(began) > 10*time.Second {
		t.Fatalf("error %v after %s", err, time.Since(began))
	}
	log := f.log(t)
	if !strings.HasPrefix(log[len(log)-1], "docker [rm] [-f] [sparrow-r-") {
		t.Errorf("the half-started container was not removed: %q", log[len(log)-1])
	}
}

func TestNoEngine(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	must(t, os.WriteFile(filepath.Join(f.bin, "noengine"), nil, 0o644))
	const daemon = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
	c, err := f.d.Capabilities(context.Background())
	want := "no Docker engine reachable (`docker info` failed: " + daemon + "): install Docker or start the daemon; Sparrow talks to it through the docker CLI"
	if err != nil || c.Available || c.UnavailableReason != want {
		t.Fatalf("capabilities %+v %v", c, err)
	}
	_, err = f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: policy()})
	if err == nil || err.Error() != "docker: prepare: "+want {
		t.Errorf("prepare: %v", err)
	}
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || out != "" || !strings.Contains(errOut, "sparrow: docker: no Docker engine reachable (docker exec failed: "+daemon+"): install Docker or start the daemon") {
		t.Errorf("exec: %+v stdout %q stderr %q", exit, out, errOut)
	}
}

func TestMissingCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	t.Setenv("PATH", t.TempDir())
	c, err := f.d.Capabilities(context.Background())
	if err != nil || c.Available || c.UnavailableReason != fixInstall {
		t.Fatalf("capabilities %+v %v", c, err)
	}
	if _, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: policy()}); err == nil || err.Error() != "docker: prepare: "+fixInstall {
		t.Errorf("prepare: %v", err)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || errOut != "sparrow: docker: "+fixInstall+"\n" {
		t.Errorf("exec: %+v %q", exit, errOut)
	}
}

func TestTeardownAndCleanup(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	for range 2 { // idempotent
		if _, err := f.d.Teardown(context.Background(), s.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.d.Teardown(context.Background(), "never-prepared"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(f.log(t), "\n"), "[rm]"); n != 1 {
		t.Errorf("%d docker rm calls, want 1", n)
	}
	if _, err := f.d.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{}); err == nil {
		t.Error("exec in a torn down session")
	}

	// Cleanup: what is still running goes, with one docker rm for all.
	a, b := f.prepare(t, policy()), f.prepare(t, policy())
	runs := []*session{f.d.sessions[a.ID], f.d.sessions[b.ID]}
	f.d.Cleanup()
	log := f.log(t)
	last := log[len(log)-1]
	if !strings.HasPrefix(last, "docker [rm] [-f]") || !strings.Contains(last, "[sparrow-"+a.ID+"]") || !strings.Contains(last, "[sparrow-"+b.ID+"]") {
		t.Errorf("cleanup ran %q", last)
	}
	for _, r := range runs {
		select {
		case <-r.exited:
		case <-time.After(5 * time.Second):
			t.Errorf("docker run of %s still running after Cleanup", r.name)
		}
	}
}

// TestPluginDeath proves the container's lifeline: when the process
// holding `docker run -i` dies, the container's main process sees its
// stdin close and the container ends (--rm then removes it).
func TestPluginDeath(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, policy())
	sess := f.d.sessions[s.ID]
	sess.closeStdin() // what the plugin's death does to the pipe
	select {
	case <-sess.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the container outlived its stdin")
	}
	if ev := f.lines(t, "events"); !slices.Equal(ev, []string{"removed sparrow-" + s.ID}) {
		t.Errorf("events %q", ev)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "sparrow: docker: the container sparrow-"+s.ID+" has stopped") {
		t.Errorf("exec after the container ended: %+v %q", exit, errOut)
	}
	// The docker run CLI dies with the plugin too (parent-death signal).
	if procAttr().Pdeathsig != syscall.SIGKILL || !procAttr().Setpgid {
		t.Error("docker CLI processes do not die with the plugin")
	}
}

func TestConfigure(t *testing.T) {
	d := New()
	err := d.Configure(context.Background(), plugin.Config{Values: []byte(`{"docker":"","image":"","pull":"sometimes","workdir":"/",` +
		`"cpus":"-1","memory":"1k","pids_limit":-1,"default_timeout":"x","start_timeout":"0s","max_output_bytes":0}`)})
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"docker: must not be empty", `image ""`, `pull "sometimes"`, `workdir "/"`, `cpus "-1"`, `memory "1k"`,
		"pids_limit -1", `default_timeout "x"`, `start_timeout "0s"`, "max_output_bytes 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	defaults := map[string]any{}
	for _, a := range d.ConfigSchema().Attributes {
		defaults[a.Name] = a.Default
	}
	b, _ := json.Marshal(defaults)
	must(t, d.Configure(context.Background(), plugin.Config{Values: b}))
	if d.settings() != defaultSettings() {
		t.Errorf("the schema's defaults configure %+v, not the defaults %+v", d.settings(), defaultSettings())
	}
	must(t, d.Configure(context.Background(), plugin.Config{Values: []byte(`{"memory":"1.5g","workdir":"/src/"}`)}))
	if cfg := d.settings(); cfg.memory != 1536<<20 || cfg.Workdir != "/src" || cfg.Image != "debian:12-slim" {
		t.Errorf("settings %+v", cfg)
	}
	for in, want := range map[string]int64{"6m": 6 << 20, "4g": 4 << 30, "4GiB": 4 << 30, "512MB": 512 << 20, "100": 100, "1.5k": 1536} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "g", "4x", "-1m", "1e3"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}
