//go:build unix

package daytona

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestCommandLinesAndSync(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	if s.Workdir != f.remote {
		t.Errorf("workdir %q, want %q", s.Workdir, f.remote)
	}
	script := "echo out; echo err >&2; echo made > made.txt; rm a.txt; exit 42"
	exit, out, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", script}, Env: map[string]string{"X": "1"}}, "")
	if exit.Code != 42 || exit.TimedOut || out != "out\nerr\n" || errOut != "" {
		t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
	}
	log := f.log(t)
	if len(log) != 7 {
		t.Fatalf("log:\n%s", strings.Join(log, "\n"))
	}
	local := regexp.MustCompile(`\[(/[^\]]*/sparrow-daytona-[^\]/]*)\]`).FindStringSubmatch(log[2])
	if local == nil {
		t.Fatalf("no local staging directory in %q", log[2])
	}
	if _, err := os.Stat(local[1]); err == nil {
		t.Errorf("local staging directory %s was left behind", local[1])
	}
	id, stage := "id-sparrow-r-n1", filepath.Join(f.scratch, ".sparrow-n1", "1")
	want := []string{
		"daytona" + bracket("create", "--name", "sparrow-r-n1", "--auto-stop", "60", "--auto-delete", "0"),
		"daytona" + bracket("info", "sparrow-r-n1", "--format", "json"),
		"daytona" + bracket("cp", local[1], id+":"+stage),
		"daytona" + bracket("exec", id, "--timeout", "600", "--", "sh", stage+"/push.sh"),
		"daytona" + bracket("exec", id, "--timeout", "60", "--", "sh", stage+"/cmd.sh"),
		"daytona" + bracket("exec", id, "--timeout", "600", "--", "sh", stage+"/pull.sh"),
		"daytona" + bracket("cp", id+":"+stage+"/pull.tar", local[1]+"/pull.tar"),
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Errorf("command lines (-want +got):\n%s", d)
	}
	all := strings.Join(log, "\n")
	for _, secret := range []string{"leak", "dtn_secretkey", "X=1"} {
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

func TestCommandScript(t *testing.T) {
	got := commandScript("/w/sub dir", []string{"A=1", "B=it's"}, []string{"printf", "%s\n", "x y"}, "/s/1/stdin", "__sparrow_exit_n2=", "/s.synced")
	want := `if [ ! -e /s.synced ]; then
  echo 'sparrow: daytona: the sandbox no longer holds its copy of the workspace; the command was not run'
  s=127
elif cd '/w/sub dir' 2>/dev/null; then
  env A=1 'B=it'\''s' printf '%s
' 'x y' </s/1/stdin
  s=$?
else
  echo 'sparrow: daytona: workdir /w/sub dir does not exist in the sandbox'
  s=127
fi
printf '\n%s%d\n' __sparrow_exit_n2= "$s"
exit "$s"
`
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cmd.sh (-want +got):\n%s", d)
	}
	if got := commandScript("/w", nil, []string{"true"}, "", "M=", "/k"); !strings.Contains(got, "env true </dev/null") {
		t.Errorf("no stdin: %s", got)
	}
}

// A sandbox that lost its copy of the workspace runs nothing on what is
// left, and its empty workspace is never copied back over the host's.
func TestLostWorkspace(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	if exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("first command: %+v", exit)
	}
	sentinel := filepath.Join(f.scratch, ".sparrow-n1.synced")
	reset := func() {
		must(t, os.RemoveAll(f.remote))
		must(t, os.Mkdir(f.remote, 0o755))
		must(t, os.Remove(sentinel))
	}
	// No change on the host: the command is refused, nothing comes back.
	reset()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"touch", "x"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "no longer holds its copy of the workspace") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "a.txt")); err != nil {
		t.Fatalf("the host lost a.txt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.remote, "x")); err == nil {
		t.Error("the command ran on an empty workspace")
	}
	// The next command uploads everything again.
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "a.txt"}}, "")
	if exit.Code != 0 || out != "hello\n" {
		t.Fatalf("after a full upload: %+v %q", exit, out)
	}
	// A change on the host: the delta upload notices.
	reset()
	must(t, os.WriteFile(filepath.Join(f.ws, "b.txt"), []byte("b\n"), 0o644))
	exit, _, errOut = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "upload the workspace: the sandbox no longer holds its copy of the workspace; the command was not run") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "a.txt")); err != nil {
		t.Fatalf("the host lost a.txt: %v", err)
	}
	exit, out, _ = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "a.txt", "b.txt"}}, "")
	if exit.Code != 0 || out != "hello\nb\n" {
		t.Fatalf("after a full upload: %+v %q", exit, out)
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
	}{
		{name: "exit 0", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf x; exit 0"}}, stdout: "x"},
		{name: "exit 1", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf x; exit 1"}}, code: 1, stdout: "x"},
		{name: "exit 42", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "printf x; exit 42"}}, code: 42, stdout: "x"},
		{name: "quotes survive", req: sandbox.ExecRequest{Argv: []string{"printf", "%s|%s", "it's", `a "b" $HOME`}}, stdout: `it's|a "b" $HOME`},
		{name: "stdin", req: sandbox.ExecRequest{Argv: []string{"cat"}}, stdin: "piped\n", stdout: "piped\n"},
		{name: "no stdin", req: sandbox.ExecRequest{Argv: []string{"cat"}}},
		{name: "relative workdir", req: sandbox.ExecRequest{Argv: []string{"pwd"}, Workdir: "sub"}, code: 127, stdout: "sparrow: daytona: workdir " + f.remote + "/sub does not exist in the sandbox\n"},
		{name: "not found", req: sandbox.ExecRequest{Argv: []string{"no-such-command"}}, code: 127},
		{name: "workdir escape", req: sandbox.ExecRequest{Argv: []string{"true"}, Workdir: "../x"}, code: 127, stderrIn: "outside the workspace"},
		{name: "memory limit", req: sandbox.ExecRequest{Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 1 << 20}}, code: 127, stderrIn: "memory limit"},
		{name: "denied argv", req: sandbox.ExecRequest{Argv: []string{"cat", ".env"}}, code: 127, stderrIn: "sparrow: daytona: .env is a denied path; the command was not run"},
		{name: "denied in script", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "cat .git/config"}}, code: 127, stderrIn: "sparrow: daytona: .git/config is a denied path; the command was not run"},
		{name: "denied workdir", req: sandbox.ExecRequest{Argv: []string{"ls"}, Workdir: ".git"}, code: 127, stderrIn: "sparrow: daytona: .git is a denied path; the command was not run"},
		{name: "bad env name", req: sandbox.ExecRequest{Argv: []string{"true"}, Env: map[string]string{"A=B": "1"}}, code: 127, stderrIn: "environment variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.SessionID = s.ID
			f.resetLog(t)
			exit, out, errOut := f.exec(t, tt.req, tt.stdin)
			if exit.Code != tt.code || (tt.stdout != "" || tt.code == 0) && out != tt.stdout || !strings.Contains(errOut, tt.stderrIn) {
				t.Fatalf("exit %+v stdout %q stderr %q", exit, out, errOut)
			}
			if tt.stderrIn != "" && f.log(t) != nil {
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

func TestTimeout(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	began := time.Now()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sleep", "30"}, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !exit.TimedOut || exit.Code != 124 || !strings.Contains(errOut, "sparrow: daytona: timed out after 300ms") || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v stderr %q after %s", exit, errOut, time.Since(began))
	}
	if log := f.log(t); !strings.Contains(strings.Join(log, "\n"), bracket("exec", "id-sparrow-r-n1", "--timeout", "1", "--", "sh")) {
		t.Errorf("the sandbox was not given the timeout:\n%s", strings.Join(log, "\n"))
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	began := time.Now()
	exit, err := f.d.Exec(ctx, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sleep", "30"}}, sandbox.IO{})
	if err != nil || exit.Code != 137 || exit.Signal != "KILL" || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v err %v after %s", exit, err, time.Since(began))
	}
}

func TestSecretsStayHome(t *testing.T) {
	f := newFixture(t)
	t.Setenv("SPARROW_TEST_SECRET", "hunter2")
	t.Setenv("DAYTONA_API_KEY", "dtn_hostkey")
	t.Setenv("DAYTONA_API_URL", "https://app.daytona.io/api")
	t.Setenv("PATH", f.bin+":"+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	f.d.getenv = os.Getenv
	s, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws,
		Policy: sandbox.Policy{AllowNetwork: true, EnvAllowlist: []string{"PATH", "HOME", "DAYTONA_API_KEY"}}})
	must(t, err)
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"env"}, Env: map[string]string{"ASKED_FOR": "yes"}}, "")
	if exit.Code != 0 || !strings.Contains(out, "ASKED_FOR=yes\n") {
		t.Fatalf("exit %+v, the request's variable is missing:\n%s", exit, out)
	}
	for _, leak := range []string{"hunter2", "dtn_hostkey", f.bin} {
		if strings.Contains(out, leak) {
			t.Errorf("%q reached the command:\n%s", leak, out)
		}
	}
}

func TestMissingCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	must(t, os.Remove(filepath.Join(f.bin, "daytona")))
	c, err := f.d.Capabilities(context.Background())
	if err != nil || c.Available || c.UnavailableReason != fixInstall || !c.Remote || c.PersistentWorkspace {
		t.Fatalf("capabilities %+v %v", c, err)
	}
	if !strings.Contains(fixInstall, "brew install daytonaio/cli/daytona") || !strings.Contains(fixInstall, "daytona login") {
		t.Errorf("the fix names no install command: %s", fixInstall)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || errOut != "sparrow: daytona: "+fixInstall+"\n" {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	_, err = f.d.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
	if err == nil || err.Error() != "daytona: prepare: "+fixInstall {
		t.Fatalf("prepare: %v", err)
	}
}

func TestCredentials(t *testing.T) {
	key, token := `{"activeProfile":"initial","profiles":[{"id":"initial","name":"initial","api":{"url":"https://app.daytona.io/api","key":"dtn_x"}}]}`,
		`{"activeProfile":"initial","profiles":[{"id":"initial","api":{"url":"u","token":{"accessToken":"at","refreshToken":"rt"}}}]}`
	tests := []struct {
		name   string
		env    map[string]string
		config string // written to $HOME/.config/daytona/config.json
		ok     bool
	}{
		{name: "api key and url", env: map[string]string{"DAYTONA_API_KEY": "k", "DAYTONA_API_URL": "u"}, ok: true},
		{name: "api key without url", env: map[string]string{"DAYTONA_API_KEY": "k"}},
		{name: "profile with key", config: key, ok: true},
		{name: "profile with token", config: token, ok: true},
		{name: "no profiles", config: `{"activeProfile":"","profiles":[]}`},
		{name: "inactive profile", config: strings.Replace(key, `"activeProfile":"initial"`, `"activeProfile":"other"`, 1)},
		{name: "nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			home := t.TempDir()
			env := map[string]string{"PATH": f.bin, "HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.config != "" {
				must(t, os.MkdirAll(filepath.Join(home, ".config", "daytona"), 0o700))
				must(t, os.WriteFile(filepath.Join(home, ".config", "daytona", "config.json"), []byte(tt.config), 0o600))
			}
			f.d.getenv = func(k string) string { return env[k] }
			c, _ := f.d.Capabilities(context.Background())
			if c.Available != tt.ok || (!tt.ok && c.UnavailableReason != fixAuth) {
				t.Fatalf("capabilities %+v", c)
			}
			if tt.ok {
				return
			}
			_, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
			if err == nil || err.Error() != "daytona: prepare: "+fixAuth || f.log(t) != nil {
				t.Fatalf("prepare: %v, log %q", err, f.log(t))
			}
		})
	}
}

func TestNotLoggedInCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	must(t, os.WriteFile(filepath.Join(f.bin, "auth"), nil, 0o644))
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	want := "sparrow: daytona: copy the command's files into the sandbox: daytona cp: the daytona CLI is not logged in (no profiles found. Run `daytona login` to authenticate): " + fixLogin + "\n"
	if exit.Code != 127 || errOut != want {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	_, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: f.policy()})
	if err == nil || !strings.Contains(err.Error(), "not logged in") || !strings.Contains(err.Error(), "daytona login") {
		t.Fatalf("prepare: %v", err)
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
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "written-by-a-tool.txt"}}, "")
	if exit.Code != 0 || out != "fresh\n" {
		t.Fatalf("the sandbox did not see the host's change: %+v %q", exit, out)
	}
	stage2 := filepath.Join(f.scratch, ".sparrow-n1", "2")
	push, err := os.ReadFile(filepath.Join(stage2, "push.sh"))
	if err != nil || strings.Contains(string(push), "find . -mindepth 1") || !strings.Contains(string(push), "tar -xf -") {
		t.Errorf("want a delta push, got %q %v", push, err)
	}
	// Earlier staging directories are removed; a command with no change
	// pushes nothing.
	if _, err := os.Stat(filepath.Join(f.scratch, ".sparrow-n1", "1")); err == nil {
		t.Error("the first command's staging directory is still there")
	}
	f.resetLog(t)
	f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if all := strings.Join(f.log(t), "\n"); strings.Contains(all, "push.sh") {
		t.Errorf("pushed without a change:\n%s", all)
	}
}

func TestNetwork(t *testing.T) {
	f := newFixture(t)
	f.configure(t, map[string]any{"workdir": f.remote, "snapshot": "daytona-small", "target": "eu", "auto_stop": 0})
	p := f.policy()
	p.AllowNetwork = false
	s, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "Run 7!", Workspace: f.ws, Policy: p})
	must(t, err)
	want := "daytona" + bracket("create", "--name", "sparrow-run7-n1", "--snapshot", "daytona-small", "--target", "eu", "--auto-stop", "0", "--auto-delete", "0", "--network-block-all")
	if log := f.log(t); log[0] != want {
		t.Errorf("create:\n got %s\nwant %s", log[0], want)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, AllowNetwork: true}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "blocks all network access") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
	if exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); exit.Code != 0 {
		t.Fatalf("a command without network: %+v", exit)
	}
}

func TestExistingSandbox(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.bin, "sandboxes"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.bin, "sandboxes", "mine"), []byte("false\n"), 0o644))
	f.configure(t, map[string]any{"workdir": f.remote, "sandbox": "mine"})
	c, _ := f.d.Capabilities(context.Background())
	if !c.Available || c.NetworkControl {
		t.Errorf("capabilities %+v", c)
	}
	p := f.policy()
	p.AllowNetwork = false
	if _, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: f.ws, Policy: p}); err == nil || !strings.Contains(err.Error(), "does not block it") {
		t.Fatalf("prepare with network denied: %v", err)
	}
	s := f.prepare(t)
	if exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "a.txt"}}, ""); exit.Code != 0 || out != "hello\n" {
		t.Fatalf("exec: %+v %q", exit, out)
	}
	_, err := f.d.Teardown(context.Background(), s.ID)
	must(t, err)
	log := f.log(t)
	if all := strings.Join(log, "\n"); strings.Contains(all, "[create]") || strings.Contains(all, "[delete]") {
		t.Errorf("an existing sandbox was created or deleted:\n%s", all)
	}
	want := "daytona" + bracket("exec", "id-mine", "--timeout", "60", "--", "rm", "-rf", filepath.Join(f.scratch, ".sparrow-n2"), filepath.Join(f.scratch, ".sparrow-n2.synced"))
	if log[len(log)-1] != want {
		t.Errorf("teardown:\n got %s\nwant %s", log[len(log)-1], want)
	}
	if m, _ := filepath.Glob(filepath.Join(f.scratch, ".sparrow-n2*")); len(m) != 0 {
		t.Errorf("staged files outlived the session: %v", m)
	}
}

func TestTeardownAndCleanup(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	_, err := f.d.Teardown(context.Background(), s.ID)
	must(t, err)
	log := f.log(t)
	if log[len(log)-1] != "daytona"+bracket("delete", "id-sparrow-r-n1") {
		t.Errorf("last command %q", log[len(log)-1])
	}
	f.resetLog(t)
	if _, err := f.d.Teardown(context.Background(), s.ID); err != nil || f.log(t) != nil { // idempotent
		t.Errorf("second teardown: %v %q", err, f.log(t))
	}
	if _, err := f.d.Exec(context.Background(), sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{}); err == nil {
		t.Error("exec after teardown")
	}

	a, b := f.prepare(t), f.prepare(t)
	f.resetLog(t)
	f.d.Cleanup()
	got := f.log(t)
	wantA, wantB := "daytona"+bracket("delete", "id-sparrow-r-n2"), "daytona"+bracket("delete", "id-sparrow-r-n3")
	if len(got) != 2 || !(got[0] == wantA && got[1] == wantB || got[0] == wantB && got[1] == wantA) {
		t.Errorf("cleanup:\n%s", strings.Join(got, "\n"))
	}
	for _, id := range []string{a.ID, b.ID} {
		if _, ok := f.d.session(id); ok {
			t.Errorf("session %s survived cleanup", id)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	f := newFixture(t)
	err := f.d.Configure(context.Background(), configValues(t, map[string]any{
		"cli": "", "workdir": "relative", "timeout": "soon", "auto_stop": -1, "sandbox": "bad name", "snapshot": "s",
	}))
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"cli:", "workdir \"relative\"", "timeout \"soon\"", "auto_stop -1", "sandbox \"bad name\"", "snapshot and target apply only"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q not reported in: %v", want, err)
		}
	}
}

func TestCLIRunsFromRoot(t *testing.T) {
	// The daytona CLI loads .env from its working directory; it must never
	// be the workspace.
	f := newFixture(t)
	cmd := f.d.command(context.Background(), "daytona", "version")
	if cmd.Dir != "/" {
		t.Errorf("the CLI runs in %q", cmd.Dir)
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "SECRET_TOKEN=") || strings.HasPrefix(kv, "LANG=") {
			t.Errorf("the CLI got %s", kv)
		}
	}
}

func configValues(t *testing.T, v map[string]any) plugin.Config {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return plugin.Config{Values: b}
}

func TestCLIErrors(t *testing.T) {
	fail := errors.New("exit status 1")
	tests := []struct {
		name, stderr, want string
		err                error
	}{
		{name: "not found", err: exec.ErrNotFound, want: fixInstall},
		{name: "no profile", err: fail, stderr: "time=\"x\" level=fatal msg=\"no profiles found. Run `daytona login` to authenticate\"\n",
			want: "the daytona CLI is not logged in (no profiles found. Run `daytona login` to authenticate): " + fixLogin},
		{name: "401", err: fail, stderr: "time=\"x\" level=fatal msg=\"Invalid API key - run 'daytona login' to reauthenticate\"\n",
			want: "the daytona CLI is not logged in (Invalid API key - run 'daytona login' to reauthenticate): " + fixLogin},
		{name: "old CLI", err: fail, stderr: "time=\"x\" level=fatal msg=\"unknown command \\\"cp\\\" for \\\"daytona\\\"\"\n",
			want: `unknown command "cp" for "daytona": this daytona CLI predates the verbs Sparrow uses (create --name, info --format, exec --timeout, cp); update it: brew upgrade daytonaio/cli/daytona`},
		{name: "other", err: fail, stderr: "FATA[0000] sandbox is not started\n", want: "exit status 1: FATA[0000] sandbox is not started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cliError(tt.err, tt.stderr).Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCLIFailure(t *testing.T) {
	fail := errors.New("exit status 1")
	tests := []struct {
		name, stderr, want string
		err                error
	}{
		{name: "logged out", err: fail, stderr: "time=\"x\" level=fatal msg=\"no active profile found. Run `daytona login` to authenticate\"\n",
			want: "the daytona CLI is not logged in (no active profile found. Run `daytona login` to authenticate): " + fixLogin},
		{name: "stopped", err: fail, stderr: "time=\"x\" level=fatal msg=\"sandbox is not started\"\n",
			want: "daytona exec failed (exit status 1): sandbox is not started; the command's exit status never arrived"},
		{name: "silent", err: nil, want: "daytona exec id-1 ended (exit status 0) without the command's exit status; is the sandbox still started?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cliFailure(tt.err, tt.stderr, "id-1").Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
