//go:build linux

package docker

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// TestRealEngine runs the backend against a real Docker engine. It needs
// `docker info` to succeed and the image (SPARROW_DOCKER_IMAGE, else
// debian:12-slim) to be present already: tests never pull.
func TestRealEngine(t *testing.T) {
	cli, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no Docker engine: the docker CLI is not on PATH")
	}
	if out, err := exec.Command(cli, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine: `docker info` failed: %s", lastLine(string(out)))
	}
	image := os.Getenv("SPARROW_DOCKER_IMAGE")
	if image == "" {
		image = "debian:12-slim"
	}
	if out, err := exec.Command(cli, "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput(); err != nil {
		t.Skipf("no Docker image %s here (tests never pull: docker pull it, or set SPARROW_DOCKER_IMAGE): %s", image, lastLine(string(out)))
	}

	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=secret\n"), 0o600))
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644))
	d := New()
	cfg, _ := json.Marshal(map[string]any{"image": image, "pull": "never", "memory": "256m", "pids_limit": 256})
	must(t, d.Configure(context.Background(), plugin.Config{Values: cfg}))
	ctx := context.Background()
	s, err := d.Prepare(ctx, sandbox.PrepareRequest{RunID: "enginetest", Workspace: ws, Policy: policy()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Cleanup)
	run := func(req sandbox.ExecRequest) (sandbox.Exit, string, string) {
		t.Helper()
		var out, errOut strings.Builder
		req.SessionID = s.ID
		exit, err := d.Exec(ctx, req, sandbox.IO{Stdout: &out, Stderr: &errOut})
		if err != nil {
			t.Fatal(err)
		}
		return exit, out.String(), errOut.String()
	}
	for _, tt := range []struct {
		name       string
		argv       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{"runs as the plugin's uid:gid", []string{"sh", "-c", "echo $(id -u):$(id -g)"}, 0, strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid()) + "\n", ""},
		{"network none: only loopback", []string{"ls", "/sys/class/net"}, 0, "lo\n", ""},
		{"denied file masked", []string{"sh", "-c", `wc -c < ./.e""nv`}, 0, "0\n", ""},
		{"denied directory masked", []string{"sh", "-c", `ls -A ./.g""it | wc -l; touch ./.g""it/x`}, 1, "0\n", "Read-only file system"},
		{"workspace writable and persistent", []string{"sh", "-c", "echo made > made.txt"}, 0, "", ""},
		{"exit code", []string{"sh", "-c", "echo e >&2; exit 7"}, 7, "", "e\n"},
		{"not found", []string{"nosuch-command"}, 127, "", "command not found: nosuch-command"},
	} {
		exit, out, errOut := run(sandbox.ExecRequest{Argv: tt.argv})
		if exit.Code != tt.code || out != tt.stdout || !strings.Contains(errOut, tt.stderrPart) {
			t.Errorf("%s: exit %+v stdout %q stderr %q", tt.name, exit, out, errOut)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("made.txt on the host: %q %v", b, err)
	}
	began := time.Now()
	exit, _, _ := run(sandbox.ExecRequest{Argv: []string{"sh", "-c", "sleep 60 & sleep 60"}, Limits: sandbox.Limits{Timeout: time.Second}})
	if !exit.TimedOut || exit.Code != 124 || time.Since(began) > 20*time.Second {
		t.Errorf("timeout: %+v after %s", exit, time.Since(began))
	}
	_, ps, _ := run(sandbox.ExecRequest{Argv: []string{"sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^sleep$' || true"}})
	if strings.TrimSpace(ps) != "0" {
		t.Errorf("%s sleep processes survived the timeout", strings.TrimSpace(ps))
	}

	if _, err := d.Teardown(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if left := containers(t, cli, s.ID); left != "" {
		t.Errorf("containers left after Teardown: %q", left)
	}

	// The lifeline: when the docker CLI holding `docker run -i` dies (as it
	// does with the plugin), the container ends and --rm removes it.
	s, err = d.Prepare(ctx, sandbox.PrepareRequest{RunID: "enginetest", Workspace: ws, Policy: policy()})
	if err != nil {
		t.Fatal(err)
	}
	killGroup(d.sessions[s.ID].run.Process)
	deadline := time.Now().Add(20 * time.Second)
	for containers(t, cli, s.ID) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("the container outlived its docker run CLI: %q", containers(t, cli, s.ID))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// containers lists the containers of a session, running or not.
func containers(t *testing.T, cli, session string) string {
	t.Helper()
	out, err := exec.Command(cli, "ps", "-a", "-q", "--filter", "label=sparrow.session="+session).CombinedOutput()
	if err != nil {
		t.Fatalf("docker ps: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}
