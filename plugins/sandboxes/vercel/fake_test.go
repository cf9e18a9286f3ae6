//go:build unix

package vercel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// fakeSandbox answers like the Vercel Sandbox CLI (packages/sandbox/src):
// create writes the new sandbox's name alone to stdout and its summary to
// stderr; exec echoes `$ COMMAND ARGS` to stderr, then runs the command in
// the "sandbox" (here, with a clean environment plus --env, as a remote
// process would have, and no stdin), streaming stdout and stderr
// separately and exiting with its status; --timeout kills it with SIGKILL
// (137) and says so; copy copies one file either way, `NAME:PATH` on the
// sandbox side; remove forgets the sandbox. With an "auth" file beside it
// every verb fails as the CLI does on HTTP 401; with a "login" file it
// starts the device login and waits, as the CLI does without credentials.
const fakeSandbox = `#!/bin/sh
line=sandbox; for a; do line="$line [$a]"; done; printf '%s\n' "$line" >> "$DIR/log"
env > "$DIR/cli-env"
if [ -f "$DIR/auth" ]; then
  echo >&2
  echo 'Sandbox API request failed due to authentication. Check your token or run ` + "`sandbox login`" + `.' >&2
  echo '├▶ requested url: https://vercel.com/api/v1/sandboxes' >&2
  echo '├▶ status code: 401 Unauthorized' >&2
  echo '╰▶ hint: the full response buffer is stored in /tmp/sandbox-cli-response-1.http' >&2
  exit 1
fi
if [ -f "$DIR/login" ]; then
  echo 'notice: Your session has expired. Please log in again.' >&2
  echo '- Creating device authorization request...' >&2
  sleep 30
  exit 1
fi
verb=$1; shift
case "$verb" in
create)
  block=false
  while [ $# -gt 0 ]; do
    case "$1" in --network-policy) [ "$2" = deny-all ] && block=true; shift 2 ;; *) shift ;; esac
  done
  mkdir -p "$DIR/sandboxes"
  name=sbx-$(ls "$DIR/sandboxes" | wc -l | tr -d ' ')
  echo "$block" > "$DIR/sandboxes/$name"
  printf '✅ Sandbox ' >&2; printf '%s' "$name"; printf ' created.\n   │ team: team_x\n   ╰ project: prj_x\n' >&2
  ;;
exec)
  t=0; envs=; i=0
  while [ "$1" != -- ]; do
    case "$1" in
    --timeout) t=${2%s}; shift 2 ;;
    --env) i=$((i+1)); eval "e$i=\$2"; envs="$envs \"\$e$i\""; shift 2 ;;
    --scope|--project) shift 2 ;;
    *) shift ;;
    esac
  done
  shift
  printf '$ %s\n' "$*" >&2
  eval "set -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/vercel-sandbox $envs \"\$@\""
  timeout -s KILL "$t" "$@" </dev/null &
  tp=$!
  trap 'kill -KILL -$tp 2>/dev/null; exit 143' TERM
  wait "$tp"
  rc=$?
  [ "$rc" = 137 ] && echo 'Command was killed (SIGKILL, exit code 137).' >&2
  exit "$rc"
  ;;
copy)
  src=; dst=
  while [ $# -gt 0 ]; do
    case "$1" in --scope|--project) shift 2 ;; *) if [ -z "$src" ]; then src=$1; else dst=$1; fi; shift ;; esac
  done
  s=$src; d=$dst
  case "$s" in *:*) s=${s#*:} ;; esac
  case "$d" in *:*) d=${d#*:} ;; esac
  if [ ! -f "$s" ]; then echo "✖ Source file ($s) not found." >&2; exit 1; fi
  cp "$s" "$d" || exit 1
  echo "✔ Copied $s to $d successfully!" >&2
  ;;
remove)
  while [ $# -gt 0 ]; do case "$1" in --scope|--project) shift 2 ;; *) rm -f "$DIR/sandboxes/$1"; shift ;; esac; done
  ;;
*) exit 2 ;;
esac
`

type fixture struct {
	v                        *Vercel
	bin, remote, scratch, ws string
	env                      map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{bin: t.TempDir(), remote: t.TempDir(), scratch: t.TempDir(), ws: t.TempDir()}
	body := strings.Replace(fakeSandbox, "#!/bin/sh\n", "#!/bin/sh\nDIR="+f.bin+"\n", 1)
	must(t, os.WriteFile(filepath.Join(f.bin, "sandbox"), []byte(body), 0o755))
	f.env = map[string]string{
		"PATH":         f.bin + ":" + os.Getenv("PATH"),
		"HOME":         t.TempDir(),
		"VERCEL_TOKEN": "vcp_secrettoken",
		"SECRET_TOKEN": "leak",
		"LANG":         "C.UTF-8",
	}
	f.v = New()
	f.v.getenv = func(k string) string { return f.env[k] }
	n := 0
	f.v.nonce = func() string { n++; return fmt.Sprintf("n%d", n) }
	f.v.scratch = f.scratch
	f.configure(t, map[string]any{"workdir": f.remote, "timeout": "1m"})
	must(t, os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("hello\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("KEY=secret\n"), 0o600))
	must(t, os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	return f
}

func (f *fixture) configure(t *testing.T, v map[string]any) {
	t.Helper()
	must(t, f.v.Configure(context.Background(), configValues(t, v)))
}

func configValues(t *testing.T, v map[string]any) plugin.Config {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return plugin.Config{Values: b}
}

func (f *fixture) policy() sandbox.Policy {
	return sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env"}, EnvAllowlist: []string{"LANG", "VERCEL_TOKEN"}}
}

func (f *fixture) prepare(t *testing.T) sandbox.Session {
	t.Helper()
	s, err := f.v.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: f.policy()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// prepareWithout prepares a session with the fake's marker file name
// removed for the while.
func (f *fixture) prepareWithout(t *testing.T, marker string) sandbox.Session {
	t.Helper()
	_ = os.Remove(filepath.Join(f.bin, marker))
	return f.prepare(t)
}

func (f *fixture) log(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.bin, "log"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func (f *fixture) resetLog(t *testing.T) {
	t.Helper()
	_ = os.Remove(filepath.Join(f.bin, "log"))
}

func (f *fixture) exec(t *testing.T, req sandbox.ExecRequest, stdin string) (sandbox.Exit, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	sio := sandbox.IO{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		sio.Stdin = strings.NewReader(stdin)
	}
	exit, err := f.v.Exec(context.Background(), req, sio)
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

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
