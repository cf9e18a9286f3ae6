//go:build unix

package vercel

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

func TestCommandLinesAndSync(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	if s.Workdir != f.remote {
		t.Errorf("workdir %q, want %q", s.Workdir, f.remote)
	}
	script := "echo out; echo err >&2; echo made > made.txt; rm a.txt; exit 42"
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", script}, Env: map[string]string{"X": "1"}}, "")
	if exit.Code != 42 || exit.TimedOut || out != "out\n" || errOut != "err\n" {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
	log := f.log(t)
	if len(log) != 6 {
		t.Fatalf("log:\n%s", strings.Join(log, "\n"))
	}
	local := regexp.MustCompile(`\[(/[^\]]*/sparrow-vercel-[^\]/]*)/push\.tar\]`).FindStringSubmatch(log[1])
	if local == nil {
		t.Fatalf("no local staging directory in %q", log[1])
	}
	if _, err := os.Stat(local[1]); err == nil {
		t.Errorf("local staging directory %s was left behind", local[1])
	}
	w, sc := f.remote, filepath.Join(f.scratch, ".sparrow-n1")
	want := []string{
		"sandbox" + bracket("create", "--non-persistent", "--timeout", "60s"),
		"sandbox" + bracket("copy", local[1]+"/push.tar", "sbx-0:"+sc+"-push.tar"),
		"sandbox" + bracket("exec", "--timeout", "600s", "sbx-0", "--", "sh", "-c",
			"exec <"+sc+"-push.tar; rm -f "+sc+"-push.tar; set -e; mkdir -p "+w+"; cd "+w+"; umask 0; find . -mindepth 1 -maxdepth 1 -exec rm -rf {} +; tar -xf -; touch "+sc+"-synced"),
		"sandbox" + bracket("exec", "--timeout", "60s", "--env", "LANG=C.UTF-8", "--env", "X=1", "sbx-0", "--",
			"sh", "-c", wrapper, "sparrow", w, "-", "__sparrow_exit_n2=", sc+"-synced", "sh", "-c", script),
		"sandbox" + bracket("exec", "--timeout", "600s", "sbx-0", "--", "sh", "-c",
			"[ -e "+sc+"-synced ] || { echo SPARROW_WORKSPACE_LOST; exit 3; }; { "+wsync.PullScript(w)+"; } >"+sc+"-pull.tar"),
		"sandbox" + bracket("copy", "sbx-0:"+sc+"-pull.tar", local[1]+"/pull.tar"),
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Errorf("command lines (-want +got):\n%s", d)
	}
	all := strings.Join(log, "\n")
	for _, secret := range []string{"leak", "vcp_secrettoken"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q reached a command line", secret)
		}
	}
	// Up: the workspace is there, denied paths are not.
	if b, err := os.ReadFile(filepath.Join(f.remote, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("remote made.txt: %q %v", b, err)
	}
	for _, p := range []string{".env", ".git"} {
		if _, err := os.Stat(filepath.Join(f.remote, p)); err == nil {
			t.Errorf("denied path %s was uploaded", p)
		}
	}
	if _, err := os.Stat(sc + "-push.tar"); err == nil {
		t.Error("the uploaded archive was left in the sandbox")
	}
	// Back: a file made remotely appears locally, one removed is removed,
	// denied files are untouched.
	if b, err := os.ReadFile(filepath.Join(f.ws, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("local made.txt: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "a.txt")); err == nil {
		t.Error("a.txt deleted remotely is still here")
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, ".env")); err != nil || string(b) != "KEY=secret\n" {
		t.Error(".env was touched")
	}
}

func TestExitCodesStdinAndRefusals(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	tests := []struct {
		name     string
		req      sandbox.ExecRequest
		stdin    string
		code     int
		stdout   string
		stderrIn string
		refused  bool
	}{
		{name: "exit 0", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf x; exit 0"}}, stdout: "x"},
		{name: "exit 1", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf x; exit 1"}}, code: 1, stdout: "x"},
		{name: "exit 42", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf x; exit 42"}}, code: 42, stdout: "x"},
		{name: "stderr apart", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "echo e >&2; printf o"}}, stdout: "o", stderrIn: "e\n"},
		{name: "quotes survive", req: sandbox.ExecRequest{Argv: []string{"printf", "%s|%s", "it's", `a "b" $HOME`}}, stdout: `it's|a "b" $HOME`},
		{name: "stdin", req: sandbox.ExecRequest{Argv: []string{"cat"}}, stdin: "piped\n", stdout: "piped\n"},
		{name: "no stdin", req: sandbox.ExecRequest{Argv: []string{"cat"}}},
		{name: "missing workdir", req: sandbox.ExecRequest{Argv: []string{"pwd"}, Workdir: "sub"}, code: 127, stderrIn: "sparrow: vercel-sandbox: workdir " + f.remote + "/sub does not exist in the sandbox"},
		{name: "not found", req: sandbox.ExecRequest{Argv: []string{"no-such-command"}}, code: 127},
		{name: "workdir escape", req: sandbox.ExecRequest{Argv: []string{"true"}, Workdir: "../x"}, code: 127, stderrIn: "outside the workspace", refused: true},
		{name: "memory limit", req: sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 1 << 20}}, code: 127, stderrIn: "memory limit", refused: true},
		{name: "denied argv", req: sandbox.ExecRequest{Argv: []string{"cat", ".env"}}, code: 127, stderrIn: "sparrow: vercel-sandbox: .env is a denied path; the command was not run", refused: true},
		{name: "denied in script", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "cat .git/config"}}, code: 127, stderrIn: "sparrow: vercel-sandbox: .git/config is a denied path; the command was not run", refused: true},
		{name: "denied workdir", req: sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: ".git"}, code: 127, stderrIn: "sparrow: vercel-sandbox: .git is a denied path; the command was not run", refused: true},
		{name: "bad env name", req: sandbox.ExecRequest{Argv: []string{"true"}, Env: map[string]string{"A=B": "1"}}, code: 127, stderrIn: "environment variable", refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.SessionID = s.ID
			f.resetLog(t)
			exit, out, errOut := f.exec(t, tt.req, tt.stdin)
			if exit.Code != tt.code || (tt.stdout != "" || tt.code == 0) && out != tt.stdout || !strings.Contains(errOut, tt.stderrIn) {
				t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
			}
			if strings.Contains(errOut, "$ sh -c") {
				t.Errorf("the CLI's echo reached stderr: %q", errOut)
			}
			if tt.refused && f.log(t) != nil {
				t.Errorf("a refused command reached the CLI:\n%s", strings.Join(f.log(t), "\n"))
			}
		})
	}
}

func TestOutputCap(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "printf 0123456789; exit 3"}, Limits: sandbox.Limits{MaxOutputBytes: 4}}, "")
	if exit.Code != 3 || !exit.OutputTruncated || out != "0123" {
		t.Fatalf("exit %+v stdout %q", exit, out)
	}
}

// Output arrives while the command runs, not when it ends.
func TestStreams(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	done := make(chan sandbox.Exit, 1)
	go func() {
		exit, _ := f.v.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo first-line-of-output-long-enough-to-pass-the-marker-hold; sleep 3"}}, sandbox.IO{Stdout: w})
		w.Close()
		done <- exit
	}()
	buf := make([]byte, 10)
	began := time.Now()
	if _, err := r.Read(buf); err != nil || string(buf) != "first-line" || time.Since(began) > 2500*time.Millisecond {
		t.Errorf("first output %q %v after %s", buf, err, time.Since(began))
	}
	if exit := <-done; exit.Code != 0 {
		t.Errorf("exit %+v", exit)
	}
}

func TestTimeout(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	began := time.Now()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sleep", "30"}, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !exit.TimedOut || exit.Code != 124 || !strings.Contains(errOut, "sparrow: vercel-sandbox: timed out after 300ms") || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v stderr %q after %s", exit, errOut, time.Since(began))
	}
	if all := strings.Join(f.log(t), "\n"); !strings.Contains(all, bracket("exec", "--timeout", "1s", "--env", "LANG=C.UTF-8", "sbx-0", "--", "sh", "-c", wrapper)) {
		t.Errorf("the sandbox was not given the timeout:\n%s", all)
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	began := time.Now()
	exit, err := f.v.Exec(ctx, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sleep", "30"}}, sandbox.IO{})
	if err != nil || exit.Code != 137 || exit.Signal != "KILL" || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v err %v after %s", exit, err, time.Since(began))
	}
}

func TestSecretsStayHome(t *testing.T) {
	f := newFixture(t)
	t.Setenv("SPARROW_TEST_SECRET", "hunter2")
	t.Setenv("VERCEL_TOKEN", "vcp_hosttoken")
	t.Setenv("VERCEL_AUTH_TOKEN", "")
	t.Setenv("VERCEL_OIDC_TOKEN", "")
	t.Setenv("PATH", f.bin+":"+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	f.v.getenv = os.Getenv
	s, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws,
		Policy: sandbox.Policy{AllowNetwork: true, EnvAllowlist: []string{"PATH", "HOME", "VERCEL_TOKEN"}}})
	must(t, err)
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"env"}, Env: map[string]string{"ASKED_FOR": "yes"}}, "")
	if exit.Code != 0 || !strings.Contains(out, "ASKED_FOR=yes\n") {
		t.Fatalf("exit %+v, the request's variable is missing:\n%s", exit, out)
	}
	for _, leak := range []string{"hunter2", "vcp_hosttoken", f.bin} {
		if strings.Contains(out, leak) {
			t.Errorf("%q reached the command:\n%s", leak, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(f.bin, "cli-env"))
	must(t, err)
	cliEnv := string(b)
	for _, want := range []string{"VERCEL_AUTH_TOKEN=vcp_hosttoken\n", "FORCE_COLOR=0\n", "VERCEL_SANDBOX_TELEMETRY_DISABLED=1\n"} {
		if !strings.Contains(cliEnv, want) {
			t.Errorf("the CLI lacks %q:\n%s", want, cliEnv)
		}
	}
	if strings.Contains(cliEnv, "hunter2") {
		t.Errorf("the CLI got a variable it does not need:\n%s", cliEnv)
	}
}

func TestMissingCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	must(t, os.Remove(filepath.Join(f.bin, "sandbox")))
	c, err := f.v.Capabilities(context.Background())
	if err != nil || c.Available || c.UnavailableReason != fixInstall || !c.Remote || c.PersistentWorkspace {
		t.Fatalf("capabilities %+v %v", c, err)
	}
	if !strings.Contains(fixInstall, "npm i -g sandbox") || !strings.Contains(fixInstall, "sandbox login") {
		t.Errorf("the fix names no install command: %s", fixInstall)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || errOut != "sparrow: vercel-sandbox: "+fixInstall+"\n" {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	_, err = f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
	if err == nil || err.Error() != "vercel-sandbox: prepare: "+fixInstall {
		t.Fatalf("prepare: %v", err)
	}
}

func TestCredentials(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		auth string // path below HOME, or $XDG for XDG_DATA_HOME
		body string
		ok   bool
	}{
		{name: "VERCEL_AUTH_TOKEN", env: map[string]string{"VERCEL_AUTH_TOKEN": "t"}, ok: true},
		{name: "VERCEL_TOKEN", env: map[string]string{"VERCEL_TOKEN": "t"}, ok: true},
		{name: "VERCEL_OIDC_TOKEN", env: map[string]string{"VERCEL_OIDC_TOKEN": "t"}, ok: true},
		{name: "sandbox login", auth: ".local/share/com.vercel.cli/auth.json", body: `{"token":"vca_x","expiresAt":1900000000}`, ok: true},
		{name: "XDG_DATA_HOME", auth: "$XDG/com.vercel.cli/auth.json", body: `{"token":"vca_x"}`, ok: true},
		{name: "legacy .now", auth: ".now/auth.json", body: `{"token":"x"}`, ok: true},
		{name: "logged out", auth: ".local/share/com.vercel.cli/auth.json", body: `{}`},
		{name: "team alone", env: map[string]string{"VERCEL_TEAM_ID": "team_x"}},
		{name: "nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			home, xdg := t.TempDir(), t.TempDir()
			env := map[string]string{"PATH": f.bin, "HOME": home, "XDG_DATA_HOME": xdg}
			for k, val := range tt.env {
				env[k] = val
			}
			if tt.auth != "" {
				p := filepath.Join(home, tt.auth)
				if rest, ok := strings.CutPrefix(tt.auth, "$XDG/"); ok {
					p = filepath.Join(xdg, rest)
				}
				must(t, os.MkdirAll(filepath.Dir(p), 0o700))
				must(t, os.WriteFile(p, []byte(tt.body), 0o600))
			}
			f.v.getenv = func(k string) string { return env[k] }
			c, _ := f.v.Capabilities(context.Background())
			if c.Available != tt.ok || (!tt.ok && c.UnavailableReason != fixAuth) {
				t.Fatalf("capabilities %+v", c)
			}
			if tt.ok {
				return
			}
			// Without credentials the CLI would wait for a device login:
			// it is never started.
			_, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
			if err == nil || err.Error() != "vercel-sandbox: prepare: "+fixAuth || f.log(t) != nil {
				t.Fatalf("prepare: %v, log %q", err, f.log(t))
			}
		})
	}
}

func TestUnauthenticatedCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	// Rejected while the command runs: no exit status arrived.
	if exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("first command: %+v", exit)
	}
	must(t, os.WriteFile(filepath.Join(f.bin, "auth"), nil, 0o644))
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "sparrow: vercel-sandbox: the Vercel Sandbox CLI is not authenticated (Sandbox API request failed due to authentication. Check your token or run `sandbox login`.): "+fixLogin+"\n") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	// Rejected before: the upload fails and the command never runs.
	s = f.prepareWithout(t, "auth")
	must(t, os.WriteFile(filepath.Join(f.bin, "auth"), nil, 0o644))
	exit, _, errOut = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	want := "sparrow: vercel-sandbox: upload the workspace: sandbox copy: the Vercel Sandbox CLI is not authenticated (Sandbox API request failed due to authentication. Check your token or run `sandbox login`.): " + fixLogin + "\n"
	if exit.Code != 127 || errOut != want {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	_, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
	if err == nil || !strings.Contains(err.Error(), "not authenticated") || !strings.Contains(err.Error(), "sandbox login") {
		t.Fatalf("prepare: %v", err)
	}
}

// Credentials that turn out unusable make the CLI start its device login
// and wait for a person: the run is stopped at once and reported.
func TestLoginPrompt(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	must(t, os.WriteFile(filepath.Join(f.bin, "login"), nil, 0o644))
	began := time.Now()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "asked for an interactive login") || !strings.Contains(errOut, fixLogin) || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v stderr %q after %s", exit, errOut, time.Since(began))
	}
	began = time.Now()
	_, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
	if err == nil || !strings.Contains(err.Error(), "sandbox create: the CLI asked for an interactive login") || time.Since(began) > 10*time.Second {
		t.Fatalf("prepare: %v after %s", err, time.Since(began))
	}
}

// The host changes between commands (a file tool writes, rewind restores):
// the next command sees it, and only the change travels.
func TestHostChangesReachTheNextCommand(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	if exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("first command: %+v", exit)
	}
	must(t, os.WriteFile(filepath.Join(f.ws, "written-by-a-tool.txt"), []byte("fresh\n"), 0o644))
	f.resetLog(t)
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "written-by-a-tool.txt"}}, "")
	if exit.Code != 0 || out != "fresh\n" {
		t.Fatalf("the sandbox did not see the host's change: %+v %q", exit, out)
	}
	push := f.log(t)[1]
	if strings.Contains(push, "find . -mindepth 1") || !strings.Contains(push, "tar -xf -") {
		t.Errorf("want a delta push, got %s", push)
	}
	f.resetLog(t)
	f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if all := strings.Join(f.log(t), "\n"); strings.Contains(all, "push.tar") {
		t.Errorf("pushed without a change:\n%s", all)
	}
}

// A sandbox that restarted empty runs nothing on what is left, and its
// empty workspace is never copied back over the host's.
func TestLostWorkspace(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	if exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("first command: %+v", exit)
	}
	reset := func() {
		must(t, os.RemoveAll(f.remote))
		must(t, os.Mkdir(f.remote, 0o755))
		must(t, os.Remove(filepath.Join(f.scratch, ".sparrow-n1-synced")))
	}
	// No change on the host: the command is refused, nothing comes back.
	reset()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"touch", "x"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "sparrow: vercel-sandbox: the sandbox no longer holds its copy of the workspace; the command was not run") ||
		!strings.Contains(errOut, "nothing was copied back") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "a.txt")); err != nil {
		t.Fatalf("the host lost a.txt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.remote, "x")); err == nil {
		t.Error("the command ran on an empty workspace")
	}
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "a.txt"}}, "")
	if exit.Code != 0 || out != "hello\n" {
		t.Fatalf("after a full upload: %+v %q", exit, out)
	}
	// A change on the host: the delta upload notices and uploads it all.
	reset()
	must(t, os.WriteFile(filepath.Join(f.ws, "b.txt"), []byte("b\n"), 0o644))
	exit, out, errOut = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "a.txt", "b.txt"}}, "")
	if exit.Code != 0 || out != "hello\nb\n" || !strings.Contains(errOut, "uploading the whole workspace again") {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
}

func TestScopeAndNetwork(t *testing.T) {
	f := newFixture(t)
	f.env["VERCEL_TEAM_ID"], f.env["VERCEL_PROJECT_ID"] = "team_env", "prj_env"
	f.configure(t, map[string]any{"workdir": f.remote, "runtime": "python3.13", "project": "prj_cfg", "timeout": "30m"})
	p := f.policy()
	p.AllowNetwork = false
	s, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: p})
	must(t, err)
	want := "sandbox" + bracket("create", "--scope", "team_env", "--project", "prj_cfg", "--non-persistent", "--runtime", "python3.13", "--timeout", "1800s", "--network-policy", "deny-all")
	if log := f.log(t); log[0] != want {
		t.Errorf("create:\n got %s\nwant %s", log[0], want)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, AllowNetwork: true}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "deny-all") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	f.resetLog(t)
	if exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("a command without network: %+v", exit)
	}
	for _, line := range f.log(t) {
		if !strings.HasPrefix(line, "sandbox [copy] [--scope] [team_env] [--project] [prj_cfg]") && !strings.HasPrefix(line, "sandbox [exec] [--scope] [team_env] [--project] [prj_cfg]") {
			t.Errorf("unscoped call: %s", line)
		}
	}
	f.configure(t, map[string]any{"workdir": f.remote, "snapshot": "snap_1"})
	f.resetLog(t)
	_, err = f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
	must(t, err)
	if log := f.log(t); !strings.Contains(log[0], bracket("--non-persistent", "--snapshot", "snap_1", "--timeout", "2700s")) {
		t.Errorf("create from a snapshot: %s", log[0])
	}
}

func TestExistingSandbox(t *testing.T) {
	f := newFixture(t)
	f.configure(t, map[string]any{"workdir": f.remote, "sandbox": "mine"})
	c, _ := f.v.Capabilities(context.Background())
	if !c.Available || c.NetworkControl {
		t.Errorf("capabilities %+v", c)
	}
	p := f.policy()
	p.AllowNetwork = false
	if _, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: p}); err == nil || !strings.Contains(err.Error(), "cannot verify or enforce") {
		t.Fatalf("prepare with network denied: %v", err)
	}
	s := f.prepare(t)
	if exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "a.txt"}}, ""); exit.Code != 0 || out != "hello\n" {
		t.Fatalf("exec: %+v %q", exit, out)
	}
	_, err := f.v.Teardown(context.Background(), s.ID)
	must(t, err)
	log := f.log(t)
	if all := strings.Join(log, "\n"); strings.Contains(all, "[create]") || strings.Contains(all, "[remove]") {
		t.Errorf("an existing sandbox was created or removed:\n%s", all)
	}
	sc := filepath.Join(f.scratch, ".sparrow-n2")
	if want := "sandbox" + bracket("exec", "--timeout", "60s", "mine", "--", "sh", "-c", "rm -f "+sc+"-*"); log[len(log)-1] != want {
		t.Errorf("teardown:\n got %s\nwant %s", log[len(log)-1], want)
	}
	if m, _ := filepath.Glob(sc + "-*"); len(m) != 0 {
		t.Errorf("staged files outlived the session: %v", m)
	}
}

func TestTeardownAndCleanup(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	_, err := f.v.Teardown(context.Background(), s.ID)
	must(t, err)
	log := f.log(t)
	if log[len(log)-1] != "sandbox"+bracket("remove", "sbx-0") {
		t.Errorf("last command %q", log[len(log)-1])
	}
	f.resetLog(t)
	if _, err := f.v.Teardown(context.Background(), s.ID); err != nil || f.log(t) != nil { // idempotent
		t.Errorf("second teardown: %v %q", err, f.log(t))
	}
	if _, err := f.v.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{}); err == nil {
		t.Error("exec after teardown")
	}

	a, b := f.prepare(t), f.prepare(t)
	f.resetLog(t)
	f.v.Cleanup()
	got := f.log(t)
	// sbx-0 was removed: the next two are sbx-0 and sbx-1 again.
	wantA, wantB := "sandbox"+bracket("remove", "sbx-0"), "sandbox"+bracket("remove", "sbx-1")
	if len(got) != 2 || !(got[0] == wantA && got[1] == wantB || got[0] == wantB && got[1] == wantA) {
		t.Errorf("cleanup:\n%s", strings.Join(got, "\n"))
	}
	for _, id := range []string{a.ID, b.ID} {
		if _, ok := f.v.session(id); ok {
			t.Errorf("session %s survived cleanup", id)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	f := newFixture(t)
	err := f.v.Configure(context.Background(), configValues(t, map[string]any{
		"cli": "", "workdir": "/", "timeout": "0s", "runtime": "node24", "snapshot": "snap", "sandbox": "a:b",
	}))
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"cli:", `workdir "/"`, `timeout "0s"`, "runtime and snapshot", `sandbox "a:b"`, "apply only to a sandbox Sparrow creates"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q not reported in: %v", want, err)
		}
	}
}

func TestEchoFilter(t *testing.T) {
	echo := "$ sh -c x\n"
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "first", writes: []string{"$ sh -c x\nerr\n"}, want: "err\n"},
		{name: "split", writes: []string{"$ sh", " -c x", "\n", "err\n"}, want: "err\n"},
		{name: "after a warning", writes: []string{"warn: failed to get or refresh OIDC token\n", "$ sh -c x\nerr\n"}, want: "warn: failed to get or refresh OIDC token\nerr\n"},
		{name: "only once", writes: []string{"$ sh -c x\n$ sh -c x\n"}, want: "$ sh -c x\n"},
		{name: "never came", writes: []string{"Sandbox not found\n"}, want: "Sandbox not found\n"},
		{name: "not at a line start", writes: []string{"a$ sh -c x\n"}, want: "a$ sh -c x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got strings.Builder
			e := &echoFilter{dst: &got, echo: []byte(echo)}
			for _, w := range tt.writes {
				if _, err := e.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			e.finish()
			if got.String() != tt.want {
				t.Errorf("got %q, want %q", got.String(), tt.want)
			}
		})
	}
}

func TestCLIErrors(t *testing.T) {
	fail := errors.New("exit status 1")
	tests := []struct {
		name, stderr, want string
		err                error
	}{
		{name: "not found", err: exec.ErrNotFound, want: fixInstall},
		{name: "401", err: fail, stderr: "\nSandbox API request failed due to authentication. Check your token or run `sandbox login`.\n├▶ status code: 401 Unauthorized\n",
			want: "the Vercel Sandbox CLI is not authenticated (Sandbox API request failed due to authentication. Check your token or run `sandbox login`.): " + fixLogin},
		{name: "scope", err: fail, stderr: "Could not determine team/project scope. Not authorized\nhint: Specify explicitly with --scope TEAM_SLUG --project PROJECT_NAME, or set VERCEL_OIDC_TOKEN.\n",
			want: "the Vercel Sandbox CLI is not authenticated (Could not determine team/project scope. Not authorized): " + fixLogin},
		{name: "other", err: fail, stderr: "\nSandbox API request failed: resource not found.\n├▶ status code: 404 Not Found\n", want: "exit status 1: Sandbox API request failed: resource not found."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cliError(tt.err, tt.stderr).Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
