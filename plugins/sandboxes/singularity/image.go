package singularity

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sparrow-cli/sparrow/plugins/sandboxes/internal/proc"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/cliout"
)

// versionTimeout bounds `apptainer --version`.
const versionTimeout = 30 * time.Second

// needVersion is what the refusal of an old CLI asks for. --no-eval, which
// keeps variable values literal, came with SingularityCE 3.10
// (sylabs/singularity#704) and Apptainer 1.1.
const needVersion = "this backend needs Apptainer >= 1.1 or SingularityCE >= 3.10 (for exec --no-eval)"

// versionLine matches what `--version` prints: cobra's template
// "PACKAGE_NAME version VERSION" (apptainer version 1.3.4, singularity-ce
// version 4.1.2; legacy Singularity prints "singularity version 3.8.7").
var versionLine = regexp.MustCompile(`(?m)^(apptainer|singularity-ce|singularity) version v?(\d+)\.(\d+)`)

// minVersion is the oldest major.minor accepted per package; legacy
// Singularity has none.
var minVersion = map[string][2]int{"apptainer": {1, 1}, "singularity-ce": {3, 10}}

// checkVersion runs `BINARY --version` and refuses a CLI too old for the
// flags this backend passes.
func (b *Singularity) checkVersion(ctx context.Context, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	var out, errOut cliout.Tail
	cmd := b.command(ctx, bin, "--version")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s --version: %v %s", bin, err, lastLine(errOut.String()))
	}
	return versionProblem(out.String())
}

// versionProblem judges what `--version` printed.
func versionProblem(out string) error {
	m := versionLine.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("cannot tell the version from %q; %s", strings.TrimSpace(out), needVersion)
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(m[3])
	want, ok := minVersion[m[1]]
	if !ok || major < want[0] || major == want[0] && minor < want[1] {
		return fmt.Errorf("%q is too old: %s; upgrade (%s)", strings.TrimSpace(m[0]), needVersion, installDocs)
	}
	return nil
}

// pull fetches uri into the session's image with `BINARY pull DEST URI`
// (`apptainer pull [pull options...] [output file] <URI>`).
func (b *Singularity) pull(ctx context.Context, s *session, uri string) error {
	var out cliout.Tail
	cmd := b.command(ctx, s.binary, "pull", s.image, uri)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s pull %s %s: %v: %s", filepath.Base(s.binary), s.image, uri, err, lastLine(out.String()))
	}
	return nil
}

// command prepares a short CLI run (version, pull) with the tool
// environment, in its own process group that dies with the plugin and is
// killed whole when ctx ends.
func (b *Singularity) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = b.environ()
	cmd.SysProcAttr = proc.Attr()
	cmd.Cancel = func() error {
		proc.KillGroup(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}
