package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sparrow-cli/sparrow/cmd/sparrow/internal/cli"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

func TestMain(m *testing.M) {
	// Confined plugins start under this binary as their init (argv[0]
	// "/.sparrow/init", which testscript would take for the test run).
	confine.Init()
	testscript.Main(removeBuilds{m}, map[string]func(){
		"sparrow": main,
	})
}

// removeBuilds deletes the plugins built for the tests once they ran
// (testscript.Main exits, so a defer would not).
type removeBuilds struct{ m *testing.M }

func (r removeBuilds) Run() int {
	code := r.m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if helloBin != "" {
		os.RemoveAll(filepath.Dir(helloBin))
	}
	if wasmGuests.dir != "" {
		os.RemoveAll(wasmGuests.dir)
	}
	return code
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// builtPlugins builds the first-party plugins the scripts use into a
// directory laid out like bin/plugins, once per test binary.
func builtPlugins(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "sparrow-test-plugins-")
		if buildErr != nil {
			return
		}
		for _, p := range [][3]string{
			{"local", "sandboxes/local", "sparrow-sandbox-local"},
			{"local-hardened", "sandboxes/local-hardened", "sparrow-sandbox-local-hardened"},
			{"modal-sandbox", "sandboxes/modal", "sparrow-sandbox-modal"},
			{"worktree", "sandboxes/worktree", "sparrow-sandbox-worktree"},
			{"docker", "sandboxes/docker", "sparrow-sandbox-docker"},
			{"singularity", "sandboxes/singularity", "sparrow-sandbox-singularity"},
			{"ssh", "sandboxes/ssh", "sparrow-sandbox-ssh"},
			{"daytona", "sandboxes/daytona", "sparrow-sandbox-daytona"},
			{"vercel-sandbox", "sandboxes/vercel", "sparrow-sandbox-vercel"},
			{"replay", "providers/replay", "sparrow-provider-replay"},
			{"core", "tools/core", "sparrow-tools"},
			{"search", "tools/search", "search.wasm"},
		} {
			if buildErr = buildPlugin(buildDir, p[0], p[1], p[2]); buildErr != nil {
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("build plugins: %v", buildErr)
	}
	return buildDir
}

// buildPlugin builds one first-party plugin; an entry named *.wasm is a
// WASI module built from cmd/<entry without .wasm>.
func buildPlugin(dst, name, dir, entry string) error {
	root := filepath.Join("..", "..", "plugins", dir)
	out := filepath.Join(dst, name)
	cmdDir, isWASM := strings.CutSuffix(entry, ".wasm")
	cmd := exec.Command("go", "build", "-o", filepath.Join(out, entry), "./cmd/"+cmdDir)
	if isWASM {
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	}
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	manifest, err := os.ReadFile(filepath.Join(root, "plugin.hcl"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "plugin.hcl"), manifest, 0o644)
}

// buildSparrow builds the real binary for tests that signal it.
func buildSparrow(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sparrow")
	// As `make build` lays it out: sparrow-init beside sparrow confines
	// the plugins (the test binary's own scripts use the fallback, itself).
	for out, pkg := range map[string]string{bin: ".", filepath.Join(filepath.Dir(bin), "sparrow-init"): "../sparrow-init"} {
		cmd := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags", "-s -w", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("build %s: %v", filepath.Base(out), err)
		}
	}
	return bin
}

func TestScripts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("scripts assume Linux process semantics")
	}
	plugins := builtPlugins(t)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			env.Setenv("SPARROW_PLUGIN_PATH", plugins)
			env.Setenv("PLUGINS", plugins)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"events":    checkEvents,
			"hello":     buildHello,
			"jsontool":  buildJSONTool,
			"serve":     serveDir,
			"sshd":      startSSHD,
			"wasmguest": buildWASMGuest,
		},
	})
}

var _ = cli.Main
