//go:build unix

package daytona

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// fakeDaytona answers like the daytona CLI (apps/cli/cmd/sandbox): create
// prints the preview URL, info --format json prints the sandbox object,
// exec runs the command in the "sandbox" (here, with a clean environment,
// as a remote process would have) and prints its stdout and stderr
// together once it has ended, exiting with its status; --timeout kills it
// and fails with the toolbox's message; cp copies a file or a directory
// in either direction. With an "auth" file beside it every verb fails with
// the CLI's no-profile error, as log.Fatal prints it.
const fakeDaytona = `#!/bin/sh
line=daytona; for a; do line="$line [$a]"; done; printf '%s\n' "$line" >> "$DIR/log"
if [ -f "$DIR/auth" ]; then
  echo 'time="2025-06-01T12:00:00Z" level=fatal msg="no profiles found. Run ` + "`daytona login`" + ` to authenticate"' >&2
  exit 1
fi
verb=$1; shift
case "$verb" in
create)
  name=; block=false
  while [ $# -gt 0 ]; do
    case "$1" in --name) name=$2; shift 2 ;; --network-block-all) block=true; shift ;; *) shift ;; esac
  done
  mkdir -p "$DIR/sandboxes" && echo "$block" > "$DIR/sandboxes/$name"
  echo "Sandbox is accessible at https://22222-$name.proxy.daytona.work"
  ;;
info)
  if [ ! -f "$DIR/sandboxes/$1" ]; then
    echo "time=\"2025-06-01T12:00:00Z\" level=fatal msg=\"Sandbox with ID or name $1 not found\"" >&2
    exit 1
  fi
  printf '{\n  "id": "id-%s",\n  "name": "%s",\n  "state": "started",\n  "networkBlockAll": %s\n}\n' "$1" "$1" "$(cat "$DIR/sandboxes/$1")"
  ;;
exec)
  shift; t=0
  while [ "$1" != -- ]; do
    case "$1" in --timeout) t=$2; shift 2 ;; *) shift ;; esac
  done
  shift
  out="$DIR/out.$$"
  timeout -s KILL "$t" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/daytona "$@" </dev/null >"$out" 2>&1 &
  tp=$!
  trap 'kill -KILL -$tp 2>/dev/null; exit 143' TERM
  wait "$tp"
  rc=$?
  if [ "$rc" = 137 ]; then
    rm -f "$out"
    echo "time=\"2025-06-01T12:00:00Z\" level=fatal msg=\"Command execution timed out after $t seconds. The timeout can be increased by adjusting the timeout parameter in the request.\"" >&2
    exit 1
  fi
  cat "$out"; rm -f "$out"
  exit "$rc"
  ;;
cp)
  case "$2" in
  *:*) p=${2#*:}
    if [ -d "$1" ]; then mkdir -p "$p" && cp -R "$1/." "$p"; else mkdir -p "$(dirname "$p")" && cp "$1" "$p"; fi || exit 1 ;;
  *) cp "${1#*:}" "$2" || exit 1 ;;
  esac
  echo "Copied 1 file(s)"
  ;;
delete)
  rm -f "$DIR/sandboxes/${1#id-}"
  echo "Sandbox $1 deleted"
  ;;
*) exit 2 ;;
esac
`

type fixture struct {
	d                        *Daytona
	bin, remote, scratch, ws string
	env                      map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{bin: t.TempDir(), remote: t.TempDir(), scratch: t.TempDir(), ws: t.TempDir()}
	body := strings.Replace(fakeDaytona, "#!/bin/sh\n", "#!/bin/sh\nDIR="+f.bin+"\n", 1)
	must(t, os.WriteFile(filepath.Join(f.bin, "daytona"), []byte(body), 0o755))
	f.env = map[string]string{
		"PATH":            f.bin + ":" + os.Getenv("PATH"),
		"HOME":            t.TempDir(),
		"DAYTONA_API_KEY": "dtn_secretkey",
		"DAYTONA_API_URL": "https://app.daytona.io/api",
		"SECRET_TOKEN":    "leak",
		"LANG":            "C.UTF-8",
	}
	f.d = New()
	f.d.getenv = func(k string) string { return f.env[k] }
	n := 0
	f.d.nonce = func() string { n++; return fmt.Sprintf("n%d", n) }
	f.d.scratch = f.scratch
	f.d.poll = time.Millisecond
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
	must(t, f.d.Configure(context.Background(), plugin.Config{Values: b}))
}

func (f *fixture) policy() sandbox.Policy {
	return sandbox.Policy{AllowNetwork: true, DeniedPaths: []string{".git", ".env"}, EnvAllowlist: []string{"LANG", "DAYTONA_API_KEY"}}
}

func (f *fixture) prepare(t *testing.T) sandbox.Session {
	t.Helper()
	s, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: f.policy()})
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
	exit, err := f.d.Exec(context.Background(), req, sio)
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
