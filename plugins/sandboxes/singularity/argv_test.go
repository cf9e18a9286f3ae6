//go:build linux

package singularity

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// envFileArg finds the env file's path in a logged exec line.
var envFileArg = regexp.MustCompile(`\[--env-file\] \[([^\]]+)\]`)

// TestExecArgv runs one command per case through the fake and compares
// the exact apptainer command line.
func TestExecArgv(t *testing.T) {
	head := []string{"--quiet", "exec", "--containall", "--cleanenv", "--no-eval", "--no-mount", "bind-paths"}
	noNet := []string{"--net", "--network", "none"}
	type env struct {
		f   *fixture
		dir string
	}
	cases := []struct {
		name   string
		policy func(f *fixture) sandbox.Policy
		setup  func(t *testing.T, f *fixture)
		req    sandbox.ExecRequest
		uid    int
		// want are the arguments after the CLI's name; ENVFILE stands for
		// the env file's path.
		want        func(e env) []string
		wantEnvFile string
	}{{
		name: "network denied by the policy",
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace", e.f.image, "true"})
		},
	}, {
		name:   "network allowed by the policy and the request",
		policy: static(sandbox.Policy{AllowNetwork: true}),
		req:    sandbox.ExecRequest{AllowNetwork: true},
		want: func(e env) []string {
			return cat(head, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace", e.f.image, "true"})
		},
	}, {
		name:   "network allowed by the policy but not asked for",
		policy: static(sandbox.Policy{AllowNetwork: true}),
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace", e.f.image, "true"})
		},
	}, {
		name:  "working directory below the workspace",
		setup: func(t *testing.T, f *fixture) { must(t, os.MkdirAll(filepath.Join(f.ws, "src", "pkg"), 0o755)) },
		req:   sandbox.ExecRequest{Workdir: "src/pkg"},
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace/src/pkg", e.f.image, "true"})
		},
	}, {
		name:   "denied paths are masked but not symlinks",
		policy: static(sandbox.Policy{DeniedPaths: []string{".git", ".env", "id_*"}}),
		setup: func(t *testing.T, f *fixture) {
			must(t, os.MkdirAll(filepath.Join(f.ws, ".git", "objects"), 0o755))
			must(t, os.MkdirAll(filepath.Join(f.ws, "sub", "deep"), 0o755))
			must(t, os.WriteFile(filepath.Join(f.ws, ".env"), []byte("KEY=secret\n"), 0o600))
			must(t, os.WriteFile(filepath.Join(f.ws, "sub", "deep", "id_rsa"), []byte("key\n"), 0o600))
			must(t, os.Symlink("/etc/hostname", filepath.Join(f.ws, "sub", ".env")))
			must(t, os.WriteFile(filepath.Join(f.ws, "main.go"), nil, 0o644))
		},
		want: func(e env) []string {
			file, dir := filepath.Join(e.dir, maskFile), filepath.Join(e.dir, maskDir)
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace",
				"--bind", file + ":/workspace/.env:ro",
				"--bind", dir + ":/workspace/.git:ro",
				"--bind", file + ":/workspace/sub/deep/id_rsa:ro",
				"--pwd", "/workspace", e.f.image, "true"})
		},
	}, {
		name: "policy paths read-only inside the workspace and read-only or read-write outside",
		policy: func(f *fixture) sandbox.Policy {
			return sandbox.Policy{ReadWritePaths: []string{f.ws, "/usr/share"}, ReadOnlyPaths: []string{filepath.Join(f.ws, "vendor"), "/usr/lib"}}
		},
		setup: func(t *testing.T, f *fixture) {
			must(t, os.MkdirAll(filepath.Join(f.ws, "vendor"), 0o755))
		},
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace",
				"--bind", "/usr/share:/usr/share",
				"--bind", e.f.ws + "/vendor:/workspace/vendor:ro",
				"--bind", "/usr/lib:/usr/lib:ro",
				"--pwd", "/workspace", e.f.image, "true"})
		},
	}, {
		name:   "allowlisted LANG and TERM and the request's variables go in an env file",
		policy: static(sandbox.Policy{EnvAllowlist: []string{"PATH", "HOME", "LANG", "TERM", "APPTAINER_CACHEDIR", "SPARROW_TEST_SECRET"}}),
		req:    sandbox.ExecRequest{Env: map[string]string{"GOFLAGS": "-mod=mod", "QUOTE": `it's "$HOME" ` + "`x`"}},
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace",
				"--env-file", "ENVFILE", e.f.image, "true"})
		},
		wantEnvFile: "GOFLAGS='-mod=mod'\nLANG='C.UTF-8'\nQUOTE='it'\\''s \"$HOME\" `x`'\nTERM='xterm-test'\n",
	}, {
		name: "memory and process limits as root",
		req:  sandbox.ExecRequest{Limits: sandbox.Limits{MemoryBytes: 256 << 20, MaxPids: 64}},
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace",
				"--memory", "268435456", "--memory-swap", "268435456", "--pids-limit", "64", e.f.image, "true"})
		},
	}, {
		name: "memory limit as a user with delegated cgroups v2",
		uid:  1000,
		setup: func(t *testing.T, f *fixture) {
			f.b.cgroupRoot = fakeCgroups(t, 1000, "cpu memory pids")
			f.env["XDG_RUNTIME_DIR"], f.env["DBUS_SESSION_BUS_ADDRESS"] = "/run/user/1000", "unix:path=/run/user/1000/bus"
		},
		req: sandbox.ExecRequest{Limits: sandbox.Limits{MemoryBytes: 1 << 30}},
		want: func(e env) []string {
			return cat(head, noNet, []string{"--bind", e.f.ws + ":/workspace", "--pwd", "/workspace",
				"--memory", "1073741824", "--memory-swap", "1073741824", e.f.image, "true"})
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.uid = tc.uid
			if tc.setup != nil {
				tc.setup(t, f)
			}
			var p sandbox.Policy
			if tc.policy != nil {
				p = tc.policy(f)
			}
			s := f.prepare(t, p)
			req := tc.req
			req.SessionID, req.Argv = s.ID, []string{"true"}
			exit, _, errOut := f.exec(t, req, "")
			if exit.Code != 0 {
				t.Fatalf("exit %+v, stderr %q", exit, errOut)
			}
			ss, _ := f.b.session(s.ID)
			got := f.last(t)
			if m := envFileArg.FindStringSubmatch(got); m != nil {
				if filepath.Dir(m[1]) != ss.dir {
					t.Errorf("env file %s is not in the session's scratch directory %s", m[1], ss.dir)
				}
				if _, err := os.Stat(m[1]); err == nil {
					t.Errorf("env file %s outlived the command", m[1])
				}
				got = strings.Replace(got, m[1], "ENVFILE", 1)
			}
			if d := cmp.Diff(line("apptainer", tc.want(env{f, ss.dir})...), got); d != "" {
				t.Errorf("command line (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEnvFile, f.envFiles(t)); d != "" {
				t.Errorf("env file (-want +got):\n%s", d)
			}
		})
	}
}

// TestMaskSources checks what the masks bind: an empty read-only file and
// an empty read-only directory in the session's private directory.
func TestMaskSources(t *testing.T) {
	f := newFixture(t)
	s := f.prepare(t, sandbox.Policy{DeniedPaths: []string{".env"}})
	ss, _ := f.b.session(s.ID)
	if fi, err := os.Stat(ss.dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scratch dir %s: %v %v, want mode 0700", ss.dir, fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(ss.dir, maskFile)); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o444 || !fi.Mode().IsRegular() {
		t.Errorf("mask file: %v %v", fi, err)
	}
	entries, err := os.ReadDir(filepath.Join(ss.dir, maskDir))
	fi, _ := os.Stat(filepath.Join(ss.dir, maskDir))
	if err != nil || len(entries) != 0 || fi.Mode().Perm() != 0o555 {
		t.Errorf("mask dir: %v entries, mode %v, %v", len(entries), fi.Mode(), err)
	}
}

// TestPlanArgv pins the argv order for a plan with everything in it.
func TestPlanArgv(t *testing.T) {
	p := execPlan{image: "/img.sif", root: "/home/u/proj", workdir: "/workspace", pwd: "/workspace/a", envFile: "/s/env-1",
		binds:  []bind{{src: "/data", dst: "/data", ro: true}},
		masks:  []bind{{src: "/s/mask-file", dst: "/workspace/.env", ro: true}},
		limits: []string{"--pids-limit", "10"}}
	want := []string{"--quiet", "exec", "--containall", "--cleanenv", "--no-eval", "--no-mount", "bind-paths",
		"--net", "--network", "none",
		"--bind", "/home/u/proj:/workspace", "--bind", "/data:/data:ro", "--bind", "/s/mask-file:/workspace/.env:ro",
		"--pwd", "/workspace/a", "--env-file", "/s/env-1", "--pids-limit", "10", "/img.sif", "sh", "-c", "echo hi"}
	if d := cmp.Diff(want, p.argv([]string{"sh", "-c", "echo hi"})); d != "" {
		t.Errorf("argv (-want +got):\n%s", d)
	}
	p.network = true
	if got := strings.Join(p.argv([]string{"true"}), " "); strings.Contains(got, "--net") {
		t.Errorf("network allowed but argv has --net: %s", got)
	}
}

// fakeCgroups makes a cgroups v2 tree where systemd delegates controllers
// to uid, and returns its root.
func fakeCgroups(t *testing.T, uid int, controllers string) string {
	t.Helper()
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o444))
	if controllers != "" {
		dir := filepath.Join(root, "user.slice", fmt.Sprintf("user-%d.slice", uid), fmt.Sprintf("user@%d.service", uid))
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(controllers+"\n"), 0o444))
	}
	return root
}

func static(p sandbox.Policy) func(*fixture) sandbox.Policy {
	return func(*fixture) sandbox.Policy { return p }
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
