//go:build linux

package docker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// fakeDocker answers like the docker CLI, running everything on this
// machine. Every call appends its argv to $DIR/log.
//
//   - info: prints a server version, or with $DIR/noengine fails (as every
//     verb then does) with the CLI's message for an unreachable daemon.
//   - run: runs the last argument (the main script) with sh, its stdin the
//     CLI's, as the container's main process; when it ends the container
//     is "removed" (--rm). With $DIR/noimage it fails like a failed pull.
//   - rm -f NAME...: kills a running container's process group; one that
//     is not running is "No such container", exit 1.
//   - exec [-i] [-w DIR] [-e NAME=VALUE]... NAME ARGV...: runs ARGV in a
//     new session with default signal dispositions, as runc does (through
//     $SPAWN, this test binary; see TestMain), with only the -e variables
//     and a container-like PATH and HOME, in DIR mapped from /workspace
//     to the workspace ($DIR/root), stdin only with -i; its exit status
//     is ARGV's, 128+N when killed by signal N. With $DIR/nosh it fails
//     as in an image without sh.
const fakeDocker = `#!/bin/sh
{ printf 'docker'; for a; do printf ' [%s]' "$a"; done; echo; } >> "$DIR/log"
if [ -n "$SPARROW_TEST_SECRET" ]; then echo "the docker CLI saw SPARROW_TEST_SECRET" >> "$DIR/leak"; fi
if [ -f "$DIR/noengine" ]; then
  echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
  exit 1
fi
case "$1" in
info)
  echo 28.2.2; exit 0 ;;
run)
  name=; prev=
  for a; do [ "$prev" = --name ] && name=$a; prev=$a; last=$a; done
  if [ -f "$DIR/noimage" ]; then
    echo "Unable to find image 'nosuch:latest' locally" >&2
    echo "docker: Error response from daemon: pull access denied for nosuch, repository does not exist or may require 'docker login'" >&2
    exit 125
  fi
  echo $$ > "$DIR/run.$name"
  sh -c "$last"
  s=$?
  rm -f "$DIR/run.$name"
  echo "removed $name" >> "$DIR/events"
  exit $s ;;
rm)
  shift 2
  for n; do
    if [ -f "$DIR/run.$n" ]; then
      kill -s KILL -- "-$(cat "$DIR/run.$n")" 2>/dev/null
      rm -f "$DIR/run.$n"
      echo "removed $n" >> "$DIR/events"
      echo "$n"
    else
      echo "Error response from daemon: No such container: $n" >&2
      st=1
    fi
  done
  exit ${st:-0} ;;
exec)
  shift
  in=; wd=/workspace; opts=1; n=$#; i=0
  while [ $i -lt $n ]; do
    a=$1; shift; i=$((i+1))
    if [ -n "$opts" ]; then
      case "$a" in
      -i) in=1; continue ;;
      -w) wd=$1; shift; i=$((i+1)); continue ;;
      -e) set -- "$@" "$1"; shift; i=$((i+1)); continue ;;
      *) opts=; ctr=$a; continue ;;
      esac
    fi
    set -- "$@" "$a"
  done
  if [ -f "$DIR/nosh" ]; then
    echo 'OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown' >&2
    exit 127
  fi
  if [ ! -f "$DIR/run.$ctr" ]; then
    echo "Error response from daemon: container $ctr is not running" >&2
    exit 1
  fi
  root=$(cat "$DIR/root")
  case "$wd" in
  /workspace) wd=$root ;;
  /workspace/*) wd=$root/${wd#/workspace/} ;;
  esac
  cd "$wd" || exit 127
  if [ -n "$in" ]; then exec 3<&0; else exec 3</dev/null; fi
  "$SPAWN" ` + spawnFlag + ` env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ "$@" <&3 3<&- &
  wait $!
  exit $? ;;
esac
echo "docker: unknown command: docker $1" >&2
exit 125
`

// spawnFlag makes this test binary spawn: become a session leader with
// default signal dispositions and exec the rest of its arguments. A shell
// cannot do that for a background job: it starts those with SIGINT and
// SIGQUIT ignored, which they could then not even trap.
const spawnFlag = "-sparrow-docker-spawn"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == spawnFlag {
		spawn(os.Args[2:])
	}
	os.Exit(m.Run())
}

func spawn(argv []string) {
	// A handled signal is reset to its default by exec; an ignored one
	// would stay ignored.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGQUIT)
	if _, err := syscall.Setsid(); err != nil {
		fmt.Fprintln(os.Stderr, "spawn: setsid:", err)
		os.Exit(125)
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintln(os.Stderr, "spawn:", err)
	os.Exit(127)
}

type fixture struct {
	d       *Docker
	bin, ws string
}

// newFixture puts the fake docker first on PATH and makes a workspace
// holding a.txt, sub/, a denied .env file and a denied .git directory.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{bin: t.TempDir(), ws: t.TempDir()}
	must(t, os.WriteFile(filepath.Join(f.bin, "docker"), []byte(f.script(t, fakeDocker)), 0o755))
	must(t, os.WriteFile(filepath.Join(f.bin, "root"), []byte(f.ws), 0o644))
	t.Setenv("PATH", f.bin+":"+os.Getenv("PATH"))
	must(t, os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("hello\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("KEY=secret\n"), 0o600))
	must(t, os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(f.ws, "sub"), 0o755))
	f.d = New()
	t.Cleanup(f.d.Cleanup)
	return f
}

// script fills in a fake's DIR and SPAWN.
func (f *fixture) script(t *testing.T, body string) string {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	return strings.Replace(body, "#!/bin/sh\n", "#!/bin/sh\nDIR="+f.bin+"\nSPAWN="+self+"\n", 1)
}

func (f *fixture) configure(t *testing.T, v map[string]any) {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	must(t, f.d.Configure(context.Background(), plugin.Config{Values: b}))
}

// policy is the fixture's default: .git and .env denied, no network, LANG
// allowlisted.
func policy() sandbox.Policy {
	return sandbox.Policy{DeniedPaths: []string{".git", ".env"}, EnvAllowlist: []string{"LANG"}}
}

func (f *fixture) prepare(t *testing.T, p sandbox.Policy) sandbox.Session {
	t.Helper()
	s, err := f.d.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "run1", Workspace: f.ws, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// log is every docker command line so far, one per call.
func (f *fixture) log(t *testing.T) []string {
	t.Helper()
	return f.lines(t, "log")
}

func (f *fixture) lines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.bin, name))
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// execs are the logged `docker exec` lines.
func (f *fixture) execs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, l := range f.log(t) {
		if strings.HasPrefix(l, "docker [exec]") {
			out = append(out, l)
		}
	}
	return out
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

// background runs req in a goroutine with stdout as a pipe the test
// reads, and returns it with stderr (read it once the outcome arrived)
// and the outcome channel.
func background(ctx context.Context, d *Docker, req sandbox.ExecRequest, sigs <-chan string) (*bufio.Reader, *strings.Builder, <-chan sandbox.Exit) {
	or, ow := io.Pipe()
	errOut := &strings.Builder{}
	ch := make(chan sandbox.Exit, 1)
	go func() {
		exit, err := d.Exec(ctx, req, sandbox.IO{Stdout: ow, Stderr: errOut, Signals: sigs})
		if err != nil {
			exit = sandbox.Exit{Code: -1, Signal: err.Error()}
		}
		ow.Close()
		ch <- exit
	}()
	return bufio.NewReader(or), errOut, ch
}

// bracket renders argv as the fake logs it.
func bracket(args ...string) string {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprintf(&b, " [%s]", a)
	}
	return b.String()
}

// markOf is the pid mark of a logged exec line.
func markOf(t *testing.T, line string) string {
	t.Helper()
	i := strings.Index(line, "[sparrow-pid-")
	if i < 0 {
		t.Fatalf("no pid mark in %q", line)
	}
	m := line[i+1:]
	return m[:strings.IndexByte(m, ']')]
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
