//go:build linux

package singularity

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

// fakeCLI answers like apptainer (or singularity) for what this backend
// runs, after appending its argv to $DIR/log:
//
//   - --version prints $DIR/version, or the real CLI's line;
//   - pull DEST URI writes DEST, or fails like Apptainer when $DIR/pullfail
//     exists;
//   - --quiet exec ... runs the command here: in the host directory the
//     --pwd maps to through the first --bind (the workspace), with stdin,
//     stdout and stderr inherited and signals reaching it (everything is
//     exec'd in place), and, under --containall or --cleanenv, with only a
//     default PATH, HOME and LANG=C plus what the --env-file sets, as
//     Apptainer's cleanenv does. The env file is copied to $DIR/envfiles
//     first. With $DIR/fatal present it fails with that FATAL line instead;
//     a command not on PATH fails with Apptainer's message.
//
// Masks and the network namespace are not emulated; the tests assert the
// arguments that ask for them.
const fakeCLI = `#!/bin/sh
{ printf '%s' "$(basename "$0")"; for a; do printf ' [%s]' "$a"; done; echo; } >> "$DIR/log"
case "$1" in
--version)
  if [ -f "$DIR/version" ]; then cat "$DIR/version"; else echo "$DEFAULT_VERSION"; fi
  exit 0 ;;
pull)
  if [ -f "$DIR/pullfail" ]; then
    echo "FATAL:   While making image from oci registry: error fetching image: unauthorized: authentication required" >&2
    exit 255
  fi
  echo "INFO:    Converting OCI blobs to SIF format" >&2
  : > "$2"; exit 0 ;;
--quiet) shift ;;
*) echo "unexpected call" >&2; exit 2 ;;
esac
[ "$1" = exec ] || exit 2
shift
clean=; pwd=; envfile=; ws=
while [ $# -gt 0 ]; do
  case "$1" in
  --containall|--cleanenv) clean=1; shift ;;
  --no-eval|--net) shift ;;
  --network|--no-mount|--memory|--memory-swap|--pids-limit) shift 2 ;;
  --bind) [ -n "$ws" ] || ws=$2; shift 2 ;;
  --pwd) pwd=$2; shift 2 ;;
  --env-file) envfile=$2; shift 2 ;;
  -*) echo "Error: unknown flag: $1" >&2; exit 255 ;;
  *) break ;;
  esac
done
shift # the image
if [ -f "$DIR/fatal" ]; then cat "$DIR/fatal" >&2; exit 255; fi
src=${ws%%:*}; dst=${ws#*:}; dst=${dst%%:*}
case "$pwd" in
"$dst") dir=$src ;;
"$dst"/*) dir=$src${pwd#"$dst"} ;;
*) echo "FATAL:   --pwd $pwd is not under the workspace bind" >&2; exit 255 ;;
esac
cd "$dir" || exit 255
if [ -n "$envfile" ]; then cat "$envfile" >> "$DIR/envfiles"; fi
if ! command -v "$1" >/dev/null 2>&1; then
  echo "FATAL:   \"$1\": executable file not found in \$PATH" >&2
  exit 255
fi
run='if [ -n "$1" ]; then set -a; . "$1"; set +a; fi; shift; exec "$@"'
if [ -n "$clean" ]; then
  exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/sparrow LANG=C /bin/sh -c "$run" fake "$envfile" "$@"
fi
exec /bin/sh -c "$run" fake "$envfile" "$@"
`

// versions are what each fake prints for --version.
var versions = map[string]string{"apptainer": "apptainer version 1.3.4", "singularity": "singularity-ce version 4.1.2"}

type fixture struct {
	b              *Singularity
	bin, ws, image string
	env            map[string]string
	uid            int
}

// newFixture installs fake CLIs under the given names (apptainer when
// none) and a backend whose environment is f.env, configured with a local
// image.
func newFixture(t *testing.T, names ...string) *fixture {
	t.Helper()
	if len(names) == 0 {
		names = []string{"apptainer"}
	}
	f := &fixture{bin: t.TempDir(), ws: t.TempDir(), image: filepath.Join(t.TempDir(), "debian.sif")}
	for _, name := range names {
		body := strings.Replace(fakeCLI, "#!/bin/sh\n", fmt.Sprintf("#!/bin/sh\nDIR=%s\nDEFAULT_VERSION=%q\n", f.bin, versions[name]), 1)
		must(t, os.WriteFile(filepath.Join(f.bin, name), []byte(body), 0o755))
	}
	must(t, os.WriteFile(f.image, []byte("SIF"), 0o644))
	f.env = map[string]string{
		"PATH":                f.bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME":                t.TempDir(),
		"APPTAINER_CACHEDIR":  "/cache/apptainer",
		"SPARROW_TEST_SECRET": "hunter2",
		"LANG":                "C.UTF-8",
		"TERM":                "xterm-test",
	}
	f.b = New()
	f.b.getenv = func(k string) string { return f.env[k] }
	f.b.uid = func() int { return f.uid }
	f.configure(t, map[string]any{"image": f.image})
	return f
}

func (f *fixture) configure(t *testing.T, v map[string]any) {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	must(t, f.b.Configure(context.Background(), plugin.Config{Values: b, StateDir: filepath.Join(f.bin, "state")}))
}

// prepare readies the workspace under p (network denied, as the kernel
// asks of a backend with network control, unless p says otherwise).
func (f *fixture) prepare(t *testing.T, p sandbox.Policy) sandbox.Session {
	t.Helper()
	s, err := f.b.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "r", Workspace: f.ws, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// log is every CLI call so far, one line each: NAME [arg] [arg]...
func (f *fixture) log(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.bin, "log"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// last is the last CLI call.
func (f *fixture) last(t *testing.T) string {
	t.Helper()
	log := f.log(t)
	if len(log) == 0 {
		t.Fatal("the CLI was never called")
	}
	return log[len(log)-1]
}

// envFiles is every env file the fake was given, concatenated.
func (f *fixture) envFiles(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(f.bin, "envfiles"))
	return string(b)
}

// exec runs req with stdin (none when empty) and returns the exit, stdout
// and stderr.
func (f *fixture) exec(t *testing.T, req sandbox.ExecRequest, stdin string) (sandbox.Exit, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	sio := sandbox.IO{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		sio.Stdin = strings.NewReader(stdin)
	}
	exit, err := f.b.Exec(context.Background(), req, sio)
	if err != nil {
		t.Fatal(err)
	}
	return exit, out.String(), errOut.String()
}

// line renders a CLI call as the fake logs it.
func line(name string, args ...string) string {
	var b strings.Builder
	b.WriteString(name)
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
