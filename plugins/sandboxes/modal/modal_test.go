//go:build unix

package modal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/wsync"
)

// fakeModal answers like Modal's CLI: `container exec --no-pty ID -- ...`
// runs the command here, its stderr merged into stdout as the real non-PTY
// path does, with no stdin; `container stop` succeeds. With an "auth" file
// beside it, it fails with Modal's missing-token error.
const fakeModal = `#!/bin/sh
{ printf 'modal'; for a; do printf ' [%s]' "$a"; done; echo; } >> "$DIR/log"
if [ -f "$DIR/auth" ]; then
  echo "modal.exception.AuthError: Token missing. Could not authenticate client. If you have token credentials, see modal.com/docs/reference/modal.config for setup help. If you are a new user, register an account at modal.com, then run modal token new." >&2
  exit 1
fi
case "$1 $2" in
"container stop") exit 0 ;;
"container exec") shift 5; exec "$@" </dev/null 2>&1 ;;
esac
exit 2
`

// fakePython answers the helper's verbs: create prints ids, put extracts
// the tar on stdin (recording its size), get writes a tar.
const fakePython = `#!/bin/sh
shift 2
{ printf 'python3'; for a; do printf ' [%s]' "$a"; done; echo; } >> "$DIR/log"
case "$1" in
create) echo '{"sandbox_id":"sb-fake1","container_id":"ta-fake1"}' ;;
put) cat > "$DIR/in.tar"; echo "put-bytes $(wc -c < "$DIR/in.tar" | tr -d ' ')" >> "$DIR/log"; sh -c "$3" < "$DIR/in.tar" ;;
get) sh -c "$3" ;;
*) exit 2 ;;
esac
`

type fixture struct {
	m               *Modal
	bin, remote, ws string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{bin: t.TempDir(), remote: t.TempDir(), ws: t.TempDir()}
	for name, body := range map[string]string{"modal": fakeModal, "python3": fakePython} {
		body = strings.Replace(body, "#!/bin/sh\n", "#!/bin/sh\nDIR="+f.bin+"\n", 1)
		must(t, os.WriteFile(filepath.Join(f.bin, name), []byte(body), 0o755))
	}
	env := map[string]string{
		"PATH":               f.bin + ":" + os.Getenv("PATH"),
		"HOME":               t.TempDir(),
		"MODAL_TOKEN_ID":     "ak-test",
		"MODAL_TOKEN_SECRET": "as-test",
		"SECRET_TOKEN":       "leak",
		"LANG":               "C.UTF-8",
	}
	f.m = New()
	f.m.getenv = func(k string) string { return env[k] }
	f.configure(t, map[string]any{"workdir": f.remote, "timeout": "1m"})
	must(t, os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("hello\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("KEY=secret\n"), 0o600))
	must(t, os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	return f
}

func (f *fixture) configure(t *testing.T, v map[string]any) {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	must(t, f.m.Configure(context.Background(), plugin.Config{Values: b}))
}

func (f *fixture) prepare(t *testing.T) sandbox.Session {
	t.Helper()
	s, err := f.m.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws,
		Policy: sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env"}, EnvAllowlist: []string{"LANG", "MODAL_TOKEN_SECRET"}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) log(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.bin, "log"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func (f *fixture) exec(t *testing.T, req sandbox.ExecRequest, stdin string) (sandbox.Exit, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	sio := sandbox.IO{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		sio.Stdin = strings.NewReader(stdin)
	}
	exit, err := f.m.Exec(context.Background(), req, sio)
	if err != nil {
		t.Fatal(err)
	}
	return exit, out.String(), errOut.String()
}

func bracket(args ...string) string {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprintf(&b, " [%s]", a)
	}
	return b.String()
}

func TestExecCommandLinesAndSync(t *testing.T) {
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
	if len(log) != 5 {
		t.Fatalf("log:\n%s", strings.Join(log, "\n"))
	}
	create := fmt.Sprintf(`{"app":"sparrow","block_network":false,"image":"debian:12-slim","timeout":60,"workdir":%q}`, f.remote)
	mark := log[3][strings.Index(log[3], "[__sparrow_exit_")+1:]
	mark = mark[:strings.IndexByte(mark, ']')]
	want := []string{
		"python3" + bracket("create", create),
		"python3" + bracket("put", "sb-fake1", "set -e; mkdir -p "+f.remote+"; cd "+f.remote+"; umask 0; find . -mindepth 1 -maxdepth 1 -exec rm -rf {} +; tar -xf -"),
		log[2], // put-bytes N
		"modal" + bracket("container", "exec", "--no-pty", "ta-fake1", "--", "sh", "-c", wrapper, "sparrow", f.remote, "", mark,
			"env", "LANG=C.UTF-8", "X=1", "sh", "-c", script),
		"python3" + bracket("get", "sb-fake1", wsync.PullScript(f.remote)),
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Errorf("command lines (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(log[2], "put-bytes ") || log[2] == "put-bytes 0" {
		t.Errorf("upload size line %q", log[2])
	}
	if strings.Contains(strings.Join(log, "\n"), "leak") || strings.Contains(strings.Join(log, "\n"), "as-test") {
		t.Error("a host secret reached the remote command line")
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
	if _, err := os.Stat(filepath.Join(f.ws, ".env")); err != nil {
		t.Error(".env was touched")
	}
}

func TestExitCodes(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	for _, code := range []int{0, 1, 42} {
		exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", fmt.Sprintf("printf x; exit %d", code)}}, "")
		if exit.Code != code || out != "x" {
			t.Errorf("exit %d: got %+v stdout %q", code, exit, out)
		}
	}
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat"}}, "piped\n")
	if exit.Code != 0 || out != "piped\n" {
		t.Errorf("stdin: %+v %q", exit, out)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Workdir: "../x"}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "outside the workspace") {
		t.Errorf("escape: %+v %q", exit, errOut)
	}
	exit, _, errOut = f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}, Limits: sandbox.Limits{MemoryBytes: 1 << 20}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "memory limit") {
		t.Errorf("memory: %+v %q", exit, errOut)
	}
}

func TestTimeout(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	began := time.Now()
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sleep", "30"}, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}, "")
	if !exit.TimedOut || exit.Code != 124 || !strings.Contains(errOut, "timed out") || time.Since(began) > 10*time.Second {
		t.Fatalf("exit %+v stderr %q after %s", exit, errOut, time.Since(began))
	}
}

func TestMissingCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	must(t, os.Remove(filepath.Join(f.bin, "modal")))
	c, err := f.m.Capabilities(context.Background())
	if err != nil || c.Available || c.UnavailableReason != fixInstall || !c.Remote || c.PersistentWorkspace {
		t.Fatalf("capabilities %+v %v", c, err)
	}
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "pip install modal, then modal token new") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
}

func TestNoCredentials(t *testing.T) {
	f := newFixture(t)
	f.m.getenv = func(k string) string {
		if k == "PATH" {
			return f.bin
		}
		return ""
	}
	c, _ := f.m.Capabilities(context.Background())
	if c.Available || c.UnavailableReason != fixAuth {
		t.Fatalf("capabilities %+v", c)
	}
}

func TestUnauthenticatedCLI(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	must(t, os.WriteFile(filepath.Join(f.bin, "auth"), nil, 0o644))
	exit, _, errOut := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	if exit.Code != 127 || !strings.Contains(errOut, "modal is not authenticated") || !strings.Contains(errOut, "modal token new") {
		t.Fatalf("exit %+v stderr %q", exit, errOut)
	}
}

func TestTeardownStopsOnlyCreated(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t)
	_, err := f.m.Teardown(context.Background(), s.ID)
	must(t, err)
	log := f.log(t)
	if log[len(log)-1] != "modal"+bracket("container", "stop", "ta-fake1") {
		t.Errorf("last command %q", log[len(log)-1])
	}
	_, err = f.m.Teardown(context.Background(), s.ID) // idempotent
	must(t, err)

	f = newFixture(t)
	f.configure(t, map[string]any{"workdir": f.remote, "container": "ta-mine"})
	s = f.prepare(t)
	exit, _, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, "")
	_, err = f.m.Teardown(context.Background(), s.ID)
	must(t, err)
	all := strings.Join(f.log(t), "\n")
	if exit.Code != 0 || strings.Contains(all, "create") || strings.Contains(all, "[stop]") || !strings.Contains(all, "[ta-mine]") {
		t.Errorf("existing container: exit %+v, log:\n%s", exit, all)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
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
	if err := os.WriteFile(filepath.Join(f.ws, "written-by-a-tool.txt"), []byte("fresh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exit, out, _ := f.exec(t, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"cat", "written-by-a-tool.txt"}}, "")
	if exit.Code != 0 || out != "fresh\n" {
		t.Fatalf("the container did not see the host's change: %+v %q", exit, out)
	}
	var puts []string
	for _, l := range f.log(t) {
		if strings.HasPrefix(l, "python3 [put]") {
			puts = append(puts, l)
		}
	}
	if len(puts) != 2 || strings.Contains(puts[1], "find . -mindepth 1") {
		t.Errorf("want a full upload then a delta, got:\n%s", strings.Join(puts, "\n"))
	}
}
