//go:build linux

package singularity

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestCapabilities(t *testing.T) {
	f := newFixture(t)
	c, err := f.b.Capabilities(context.Background())
	must(t, err)
	want := sandbox.Capabilities{Available: true, NetworkControl: true, FilesystemIsolation: true,
		ResourceLimits: true, PersistentWorkspace: true}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("capabilities (-want +got):\n%s", d)
	}
}

func TestMissingBinary(t *testing.T) {
	f := newFixture(t)
	f.env["PATH"] = t.TempDir()
	const reason = "singularity: neither apptainer nor singularity is on PATH: install Apptainer (https://apptainer.org/docs/admin/main/installation.html)"
	c, _ := f.b.Capabilities(context.Background())
	if c.Available || c.UnavailableReason != reason {
		t.Errorf("capabilities %+v", c)
	}
	_, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws})
	if err == nil || err.Error() != reason {
		t.Errorf("prepare: %v, want %q", err, reason)
	}

	f.configure(t, map[string]any{"image": f.image, "binary": "/opt/apptainer/bin/apptainer"})
	c, _ = f.b.Capabilities(context.Background())
	if c.Available || !strings.Contains(c.UnavailableReason, `binary "/opt/apptainer/bin/apptainer" not found: install Apptainer`) {
		t.Errorf("configured binary: %+v", c)
	}
}

func TestBinaryRemovedAfterPrepare(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	must(t, os.Remove(filepath.Join(f.bin, "apptainer")))
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || errOut != "sparrow: singularity: "+fixInstall+"\n" {
		t.Errorf("exit %+v stderr %q", exit, errOut)
	}
}

func TestBinaryChoice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fakes  []string
		binary string
		want   string
	}{
		{name: "apptainer when both are there", fakes: []string{"apptainer", "singularity"}, want: "apptainer"},
		{name: "singularity when apptainer is missing", fakes: []string{"singularity"}, want: "singularity"},
		{name: "the configured binary wins", fakes: []string{"apptainer", "singularity"}, binary: "singularity", want: "singularity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.fakes...)
			cfg := map[string]any{"image": f.image}
			if tc.binary != "" {
				cfg["binary"] = tc.binary
			}
			f.configure(t, cfg)
			s := f.prepare(t, sandbox.Policy{})
			exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"echo", "hi"}}, "")
			if exit.Code != 0 || out != "hi\n" {
				t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
			}
			log := f.log(t)
			if !strings.HasPrefix(log[0], tc.want+" [--version]") || !strings.HasPrefix(log[1], tc.want+" [--quiet] [exec]") {
				t.Errorf("calls:\n%s", strings.Join(log, "\n"))
			}
		})
	}
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		out, err string
	}{
		{out: "apptainer version 1.3.4\n"},
		{out: "apptainer version 1.1.0-rc.2\n"},
		{out: "apptainer version 1.4.0-1.el9\n"},
		{out: "singularity-ce version 3.10.0\n"},
		{out: "singularity-ce version 4.1.2-jammy\n"},
		{out: "apptainer version 1.0.3\n", err: `"apptainer version 1.0" is too old: this backend needs Apptainer >= 1.1 or SingularityCE >= 3.10 (for exec --no-eval); upgrade (https://apptainer.org/docs/admin/main/installation.html)`},
		{out: "singularity-ce version 3.9.9\n", err: `"singularity-ce version 3.9" is too old`},
		{out: "singularity version 3.8.7\n", err: `"singularity version 3.8" is too old`},
		{out: "whatever 2\n", err: `cannot tell the version from "whatever 2"`},
	} {
		err := versionProblem(tc.out)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.out, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%q: %v, want %q", tc.out, err, tc.err)
		}
	}
	f := newFixture(t)
	must(t, os.WriteFile(filepath.Join(f.bin, "version"), []byte("apptainer version 1.0.3\n"), 0o644))
	_, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws})
	if err == nil || !strings.Contains(err.Error(), "singularity: prepare: \"apptainer version 1.0\" is too old") {
		t.Errorf("prepare with an old CLI: %v", err)
	}
}

func TestPrepareErrors(t *testing.T) {
	f := newFixture(t)
	missing := filepath.Join(t.TempDir(), "nope.sif")
	f.configure(t, map[string]any{"image": missing})
	_, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws})
	want := "singularity: prepare: image " + missing + " does not exist: build or pull it (apptainer pull " + missing + " docker://debian:12-slim), or set image to a URI such as docker://debian:12-slim"
	if err == nil || err.Error() != want {
		t.Errorf("missing image: %v\nwant %s", err, want)
	}

	f = newFixture(t)
	for _, tc := range []struct {
		req  sandbox.PrepareRequest
		want string
	}{
		{sandbox.PrepareRequest{Workspace: "rel"}, `workspace "rel" is not an absolute path`},
		{sandbox.PrepareRequest{Workspace: filepath.Join(f.ws, "nope")}, "is not a directory"},
		{sandbox.PrepareRequest{Workspace: f.ws, Policy: sandbox.Policy{ReadOnlyPaths: []string{"/nonexistent/x"}}},
			"policy path /nonexistent/x does not exist; Apptainer can only bind existing paths"},
	} {
		if _, err := f.b.Prepare(context.Background(), tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
	odd := filepath.Join(t.TempDir(), "a:b")
	must(t, os.Mkdir(odd, 0o755))
	if _, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: odd}); err == nil || !strings.Contains(err.Error(), "cannot carry ':' or ','") {
		t.Errorf("workspace with a colon: %v", err)
	}
}

func TestConfigure(t *testing.T) {
	b := New()
	raw, _ := json.Marshal(map[string]any{"image": "debian.sif", "workdir": "rel", "default_timeout": "0s", "max_output_bytes": 0})
	err := b.Configure(context.Background(), plugin.Config{Values: raw})
	for _, want := range []string{`image "debian.sif": want an absolute path or a URI`, `workdir "rel"`, `default_timeout "0s"`, "max_output_bytes 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config error %v lacks %q", err, want)
		}
	}
	f := newFixture(t)
	b = New()
	b.getenv = func(k string) string { return f.env[k] }
	c, _ := b.Capabilities(context.Background())
	if c.Available || !strings.Contains(c.UnavailableReason, `singularity: no image configured: set image in the sandbox "singularity" block`) {
		t.Errorf("unconfigured backend: %+v", c)
	}
}

func TestPullURIImage(t *testing.T) {
	f := newFixture(t)
	f.configure(t, map[string]any{"image": "docker://debian:12-slim", "workdir": "/work"})
	s := f.prepare(t, sandbox.Policy{})
	if s.Workdir != "/work" {
		t.Errorf("workdir %q", s.Workdir)
	}
	ss, _ := f.b.session(s.ID)
	sif := filepath.Join(ss.dir, "image.sif")
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	log := f.log(t)
	want := []string{
		line("apptainer", "--version"),
		line("apptainer", "pull", sif, "docker://debian:12-slim"),
		line("apptainer", "--quiet", "exec", "--containall", "--cleanenv", "--no-eval", "--no-mount", "bind-paths",
			"--net", "--network", "none", "--bind", f.ws+":/work", "--pwd", "/work", sif, "true"),
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	_, err := f.b.Teardown(context.Background(), s.ID)
	must(t, err)
	if _, err := os.Stat(ss.dir); !os.IsNotExist(err) {
		t.Errorf("scratch dir with the pulled image is still there: %v", err)
	}

	must(t, os.WriteFile(filepath.Join(f.bin, "pullfail"), nil, 0o644))
	_, err = f.b.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws})
	if err == nil || !strings.Contains(err.Error(), "pull") || !strings.Contains(err.Error(), "FATAL:   While making image from oci registry: error fetching image: unauthorized: authentication required") {
		t.Errorf("failed pull: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(f.bin, "state", "singularity", "*")); len(left) != 0 {
		t.Errorf("a failed Prepare left %v", left)
	}
}

func TestExitCodesStdinAndStreams(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	for _, code := range []int{0, 1, 42, 255} {
		exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID,
			Argv: []string{"sh", "-c", fmt.Sprintf("echo out; echo err >&2; exit %d", code)}}, "")
		if exit.Code != code || out != "out\n" || errOut != "err\n" || exit.Duration <= 0 {
			t.Errorf("exit %d: got %+v stdout %q stderr %q", code, exit, out, errOut)
		}
	}
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat"}}, "piped\n")
	if exit.Code != 0 || out != "piped\n" {
		t.Errorf("stdin: %+v %q", exit, out)
	}
	exit, out, _ = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x"},
		Limits: sandbox.Limits{MaxOutputBytes: 100}}, "")
	if exit.Code != 0 || !exit.OutputTruncated || len(out) != 100 {
		t.Errorf("output cap: %+v, %d bytes", exit, len(out))
	}
}

func TestApptainerFailures(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"no-such-command"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, `FATAL:   "no-such-command": executable file not found in $PATH`) ||
		!strings.HasSuffix(errOut, "sparrow: singularity: command not found in the image: no-such-command\n") {
		t.Errorf("command not found: %+v %q", exit, errOut)
	}
	fatal := "FATAL:   container creation failed: mount /proc->/proc error: while mounting proc: can't mount proc filesystem to /proc: operation not permitted\n"
	must(t, os.WriteFile(filepath.Join(f.bin, "fatal"), []byte(fatal), 0o644))
	exit, _, errOut = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || errOut != fatal+"sparrow: singularity: apptainer failed before the command ran: "+strings.TrimSpace(fatal)+"\n" {
		t.Errorf("apptainer failure: %+v %q", exit, errOut)
	}
}

func TestSecretsStayOutAndRequestEnvGetsIn(t *testing.T) {
	f := newFixture(t)
	t.Setenv("SPARROW_TEST_SECRET", "hunter2")
	t.Setenv("APPTAINER_CACHEDIR", "/cache/hunter3")
	t.Setenv("SINGULARITY_CACHEDIR", "/cache/hunter4")
	t.Setenv("APPTAINER_TMPDIR", "/tmp/hunter5")
	t.Setenv("APPTAINER_BIND", "/etc:/hunter6")
	t.Setenv("APPTAINERENV_LEAK", "hunter7")
	t.Setenv("PATH", f.env["PATH"])
	t.Setenv("HOME", "/home/hunter8")
	t.Setenv("LANG", "C.UTF-8")
	f.b.getenv = os.Getenv
	s := f.prepare(t, sandbox.Policy{EnvAllowlist: []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER", "SPARROW_TEST_SECRET"}})
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"env"},
		Env: map[string]string{"FROM_REQUEST": "visible $HOME 'q'"}}, "")
	if exit.Code != 0 {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, want := range []string{"FROM_REQUEST=visible $HOME 'q'", "LANG=C.UTF-8"} {
		if !slices.Contains(lines, want) {
			t.Errorf("env lacks %q:\n%s", want, out)
		}
	}
	for i := 2; i <= 8; i++ {
		if secret := fmt.Sprintf("hunter%d", i); strings.Contains(out, secret) {
			t.Errorf("%s reached the command:\n%s", secret, out)
		}
	}
	call := f.last(t)
	if !strings.Contains(call, "[--cleanenv]") || !strings.Contains(call, "[--containall]") {
		t.Errorf("no --cleanenv in %s", call)
	}
	if strings.Contains(call, "visible") || strings.Contains(call, "hunter") {
		t.Errorf("a variable's value is on the command line: %s", call)
	}
	// What the apptainer process itself got: only its own variables.
	env := f.b.environ()
	if slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "SPARROW_TEST_SECRET=") || strings.HasPrefix(kv, "APPTAINER_BIND=") || strings.HasPrefix(kv, "APPTAINERENV_")
	}) {
		t.Errorf("apptainer's own environment: %v", env)
	}
}

func TestEnvRefusals(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Env: map[string]string{"BAD-NAME": "x"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, `environment variable "BAD-NAME" cannot be passed into the container`) {
		t.Errorf("%+v %q", exit, errOut)
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.ws, "sub"), 0o755))
	must(t, os.Symlink("/", filepath.Join(f.ws, "root")))
	must(t, os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755))
	s := f.prepare(t, sandbox.Policy{DeniedPaths: []string{".git", ".env"}})
	f.uid = 1000
	f.b.cgroupRoot = t.TempDir() // no cgroup.controllers: cgroups v1
	for _, tc := range []struct {
		name string
		req  sandbox.ExecRequest
		want string
	}{
		{"denied argument", sandbox.ExecRequest{Argv: []string{"cat", ".env"}},
			"sparrow: singularity: .env is a denied path; the command was not run\n"},
		{"denied word in a script", sandbox.ExecRequest{Argv: []string{"sh", "-c", "cat sub/.git/config"}},
			"sparrow: singularity: cat sub/.git/config is a denied path; the command was not run\n"},
		{"denied workdir", sandbox.ExecRequest{Argv: []string{"true"}, Workdir: ".git"},
			"sparrow: singularity: .git is a denied path; the command was not run\n"},
		{"workdir outside", sandbox.ExecRequest{Argv: []string{"true"}, Workdir: "../x"},
			`sparrow: singularity: workdir "../x" is outside the workspace /workspace` + "\n"},
		{"workdir through a symlink", sandbox.ExecRequest{Argv: []string{"true"}, Workdir: "root/etc"},
			`sparrow: singularity: workdir "root/etc" resolves outside the workspace` + "\n"},
		{"network for a policy that denies it", sandbox.ExecRequest{Argv: []string{"true"}, AllowNetwork: true},
			"sparrow: singularity: the policy denies network access and this command asked for it; it was not run\n"},
		{"disk limit", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{DiskBytes: 1 << 30}},
			"sparrow: singularity: this backend cannot enforce a disk limit: Apptainer has no disk quota flag\n"},
		{"CPU time limit", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{CPUTime: 1e9}},
			"sparrow: singularity: this backend cannot enforce a CPU-time limit: Apptainer's --cpus caps a rate, not total CPU time\n"},
		{"memory limit on cgroups v1", sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 1 << 20}},
			"sparrow: singularity: cannot enforce a memory limit here: a non-root user needs cgroups v2 (the unified hierarchy) and this machine does not mount it at "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.log(t))
			tc.req.SessionID = s.ID
			exit, _, errOut := f.exec(t, tc.req, "")
			if exit.Code != 127 || !strings.HasPrefix(errOut, tc.want) {
				t.Errorf("exit %+v stderr %q, want prefix %q", exit, errOut, tc.want)
			}
			if after := len(f.log(t)); after != before {
				t.Errorf("apptainer was run for a refused command")
			}
		})
	}
}

func TestCgroupChecks(t *testing.T) {
	f := newFixture(t)
	f.uid = 1000
	for _, tc := range []struct {
		name        string
		root        string
		session     bool
		controllers []string
		want        string
	}{
		{name: "root may always", want: ""},
		{name: "cgroups v1", root: "v1", want: "a non-root user needs cgroups v2"},
		{name: "no user session", root: "memory pids", want: "a non-root user needs a systemd user session and XDG_RUNTIME_DIR is not set"},
		{name: "no delegation", root: "", session: true, want: "systemd delegates no cgroup to user 1000"},
		{name: "pids not delegated", root: "cpu memory", session: true, controllers: []string{"memory", "pids"},
			want: "systemd does not delegate the pids controller to user 1000"},
		{name: "all delegated", root: "cpu memory pids", session: true, controllers: []string{"memory", "pids"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.uid = 1000
			if tc.name == "root may always" {
				f.uid = 0
			}
			switch tc.root {
			case "v1":
				f.b.cgroupRoot = t.TempDir()
			default:
				f.b.cgroupRoot = fakeCgroups(t, 1000, tc.root)
			}
			delete(f.env, "XDG_RUNTIME_DIR")
			delete(f.env, "DBUS_SESSION_BUS_ADDRESS")
			if tc.session {
				f.env["XDG_RUNTIME_DIR"], f.env["DBUS_SESSION_BUS_ADDRESS"] = "/run/user/1000", "unix:path=/run/user/1000/bus"
			}
			controllers := tc.controllers
			if controllers == nil {
				controllers = []string{"memory"}
			}
			got := f.b.cgroupProblem(controllers)
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want prefix %q", got, tc.want)
			}
		})
	}
}

func TestWorkdirForms(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.ws, "a", "b"), 0o755))
	s := f.prepare(t, sandbox.Policy{})
	for _, dir := range []string{"a/b", "/workspace/a/b", filepath.Join(f.ws, "a", "b")} {
		exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"pwd"}, Workdir: dir}, "")
		if exit.Code != 0 || out != filepath.Join(f.ws, "a", "b")+"\n" || !strings.Contains(f.last(t), "[--pwd] [/workspace/a/b]") {
			t.Errorf("workdir %q: %+v %q %q", dir, exit, out, errOut)
		}
	}
}

func TestTeardownAndCleanup(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{})
	ss, _ := f.b.session(s.ID)
	if _, err := f.b.Teardown(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ss.dir); !os.IsNotExist(err) {
		t.Errorf("scratch dir left: %v", err)
	}
	if _, err := f.b.Teardown(context.Background(), s.ID); err != nil {
		t.Errorf("second teardown: %v", err)
	}
	if _, err := f.b.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{}); err == nil {
		t.Error("exec after teardown succeeded")
	}
	s = f.prepare(t, sandbox.Policy{})
	ss, _ = f.b.session(s.ID)
	f.b.Cleanup()
	if _, err := os.Stat(ss.dir); !os.IsNotExist(err) {
		t.Errorf("cleanup left the scratch dir: %v", err)
	}
	for _, l := range f.log(t) {
		if strings.Contains(l, "instance") {
			t.Errorf("an instance was used: %s", l)
		}
	}
}
