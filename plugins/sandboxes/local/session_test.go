//go:build unix

package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

func TestCapabilities(t *testing.T) {
	got, err := New().Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := sandbox.Capabilities{Available: true, ResourceLimits: true, PersistentWorkspace: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
}

func TestPrepare(t *testing.T) {
	l := New()
	ws := t.TempDir()
	allow := sandbox.Policy{AllowNetwork: true}
	a, err := l.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "run-1", Workspace: ws + "/", Policy: allow})
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Prepare(context.Background(), sandbox.PrepareRequest{RunID: "run-1", Workspace: ws, Policy: allow})
	if err != nil {
		t.Fatal(err)
	}
	if a.Workdir != ws || !strings.HasPrefix(a.ID, "run-1-") || a.ID == b.ID {
		t.Errorf("sessions %+v and %+v: want workdir %s and distinct run-based ids", a, b, ws)
	}
	file := filepath.Join(ws, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		name string
		req  sandbox.PrepareRequest
		want string
	}{
		{"relative workspace", sandbox.PrepareRequest{Workspace: "ws", Policy: allow}, `workspace "ws" is not an absolute path`},
		{"missing workspace", sandbox.PrepareRequest{Workspace: filepath.Join(ws, "nope"), Policy: allow}, "is not a directory"},
		{"file workspace", sandbox.PrepareRequest{Workspace: file, Policy: allow}, "is not a directory"},
		{"read-only paths", sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{AllowNetwork: true, ReadOnlyPaths: []string{"/usr"}}},
			"cannot enforce read-only paths (/usr); use local-hardened or docker"},
		{"no network", sandbox.PrepareRequest{Workspace: ws}, "cannot block network access; use local-hardened or docker"},
	}
	for _, tc := range cases {
		if _, err := l.Prepare(context.Background(), tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSessionLifecycle(t *testing.T) {
	l, s := prepared(t)
	ctx := context.Background()
	if got, _ := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, ""); got.Code != 0 {
		t.Fatalf("exec in a live session: %+v", got)
	}
	_, err := l.Teardown(ctx, s.ID)
	must(t, err)
	if _, err := os.Stat(s.Workdir); err != nil {
		t.Errorf("teardown touched the workspace: %v", err)
	}
	if _, err := l.Teardown(ctx, s.ID); err != nil {
		t.Errorf("second teardown is not idempotent: %v", err)
	}
	if _, err := l.Exec(ctx, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"true"}}, sandbox.IO{}); err == nil ||
		!strings.Contains(err.Error(), "torn down") {
		t.Errorf("exec in a torn-down session: %v", err)
	}
}

func TestConfigure(t *testing.T) {
	l := New()
	schema := map[string]any{}
	for _, a := range l.ConfigSchema().Attributes {
		schema[a.Name] = a.Default
	}
	if diff := cmp.Diff(map[string]any{"shell": "/bin/sh", "default_timeout": "10m", "max_output_bytes": int64(1 << 20)}, schema); diff != "" {
		t.Errorf("schema defaults (-want +got):\n%s", diff)
	}
	vals, _ := json.Marshal(map[string]any{"shell": "/bin/bash", "default_timeout": "50ms", "max_output_bytes": 4})
	must(t, l.Configure(context.Background(), plugin.Config{Values: vals}))
	if !strings.Contains(l.Description(), "/bin/bash") {
		t.Errorf("description %q does not report the shell", l.Description())
	}
	s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: t.TempDir(), Policy: sandbox.Policy{AllowNetwork: true}})
	must(t, err)
	got, _ := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "echo 123456; sleep 5"}}, "")
	if diff := cmp.Diff(result{Code: 124, Signal: "TERM", TimedOut: true, Truncated: true, Stdout: "1234"}, got); diff != "" {
		t.Errorf("configured defaults (-want +got):\n%s", diff)
	}
	// A request's own limits win over the defaults.
	got, _ = execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"sh", "-c", "sleep 0.2; echo 123456"},
		Limits: sandbox.Limits{Timeout: 5 * time.Second, MaxOutputBytes: 100}}, "")
	if diff := cmp.Diff(result{Stdout: "123456\n"}, got); diff != "" {
		t.Errorf("request limits (-want +got):\n%s", diff)
	}
	bad := `{"shell":"sh","default_timeout":"soon","max_output_bytes":0}`
	err = l.Configure(context.Background(), plugin.Config{Values: []byte(bad)})
	for _, want := range []string{`shell "sh"`, `default_timeout "soon"`, "max_output_bytes 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("configure %s: err = %v, want it to name %s", bad, err, want)
		}
	}
	if err := l.Configure(context.Background(), plugin.Config{Values: []byte(`{"max_output_bytes":"lots"}`)}); err == nil {
		t.Error("accepted a string for max_output_bytes")
	}
}

func TestSeedRules(t *testing.T) {
	l := New()
	l.getenv = fakeEnv
	// A denied name above the workspace does not count: only what commands
	// name inside it does.
	ws := filepath.Join(t.TempDir(), "id_rsa", "ws")
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	s, err := l.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{
		AllowNetwork: true, DeniedPaths: []string{".git", ".env", "id_rsa"}, EnvAllowlist: []string{"PATH"}}})
	must(t, err)
	cases := []struct {
		argv    []string
		workdir string
		denied  string
	}{
		{[]string{"cat", ".env"}, "", ".env"},
		{[]string{"sh", "-c", "cat src/.env | head"}, "", "src/.env"},
		{[]string{"cp", "x", "/root/.ssh/id_rsa"}, "", "/root/.ssh/id_rsa"},
		{[]string{"ls"}, ".git", ".git"},
		{[]string{"pwd"}, "", ""},
		{[]string{"echo", "environment"}, "", ""},
		{[]string{"echo", ".envrc"}, "", ""},
	}
	for _, tc := range cases {
		got, stderr := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: tc.argv, Workdir: tc.workdir}, "")
		if tc.denied == "" {
			if got.Code != 0 {
				t.Errorf("%q refused: %+v %s", tc.argv, got, stderr)
			}
			continue
		}
		if got.Code != 127 || !strings.Contains(stderr, "sparrow: local: "+tc.denied+" is a denied path; the command was not run") {
			t.Errorf("%q in %q: %+v stderr %q", tc.argv, tc.workdir, got, stderr)
		}
	}
	// DenyRead and DenyWrite paths inside the workspace are refused the
	// same way; those outside it (the home denials) are not this
	// backend's to enforce, so commands naming them still run.
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "secrets"), 0o755))
	d, err := l.Prepare(context.Background(), sandbox.PrepareRequest{Workspace: ws, Policy: sandbox.Policy{
		AllowNetwork: true, EnvAllowlist: []string{"PATH"},
		DenyRead:  []string{filepath.Join(home, ".aws"), filepath.Join(ws, "secrets")},
		DenyWrite: []string{filepath.Join(ws, "vendor")}}})
	must(t, err)
	for _, tc := range []struct {
		argv    []string
		workdir string
		denied  string
	}{
		{[]string{"cat", "secrets/key"}, "", "secrets/key"},
		{[]string{"ls"}, "secrets", filepath.Join(ws, "secrets")},
		{[]string{"sh", "-c", "echo x > vendor/a"}, "", "vendor/a"},
		{[]string{"ls", filepath.Join(home, ".aws")}, "", ""},
		{[]string{"ls", "secrets-not"}, "", ""},
	} {
		got, stderr := execute(t, l, sandbox.ExecRequest{SessionID: d.ID, Argv: tc.argv, Workdir: tc.workdir}, "")
		if tc.denied == "" {
			if got.Code == 127 {
				t.Errorf("%q refused: %+v %s", tc.argv, got, stderr)
			}
			continue
		}
		if got.Code != 127 || !strings.Contains(stderr, "sparrow: local: "+tc.denied+" is a denied path; the command was not run") {
			t.Errorf("%q in %q: %+v stderr %q", tc.argv, tc.workdir, got, stderr)
		}
	}
	// The allowlist keeps only the base variables it names.
	got, _ := execute(t, l, sandbox.ExecRequest{SessionID: s.ID, Argv: []string{"env"}}, "")
	if want := "PATH=" + os.Getenv("PATH") + "\n"; got.Stdout != want {
		t.Errorf("env %q, want only %q", got.Stdout, want)
	}
}
