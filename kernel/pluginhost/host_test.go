package pluginhost_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// testPlugin writes a plugin directory whose entry is a copy of the test
// binary and returns its manifest path.
func testPlugin(t *testing.T, name, kind, sdkRange string, components ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, "entry")); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`plugin %q {
  kind       = %q
  version    = "1.0.0"
  sdk        = %q
  entry      = "entry"
  components = [%s]
  capabilities {
    env = ["TEST_PLUGIN_MODE", "FOO"]
  }
}
`, name, kind, sdkRange, `"`+strings.Join(components, `", "`)+`"`)
	path := filepath.Join(dir, pluginhost.ManifestFile)
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type hostOpt func(*pluginhost.Options)

// newHost returns a Host for one test plugin run in mode.
func newHost(t *testing.T, mode, kind string, components []string, opts ...hostOpt) (*pluginhost.Host, *pluginhost.Manifest) {
	t.Helper()
	m, diags := pluginhost.ReadManifest(testPlugin(t, "p-"+mode, kind, ">= 0.1.0, < 0.2.0", components...))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	o := pluginhost.Options{
		SparrowVersion: "test",
		StartTimeout:   5 * time.Second,
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "TEST_PLUGIN_MODE":
				return mode, true
			case "FOO":
				return "declared", true
			case "SECRET":
				return "leaked", true
			}
			return "", false
		},
	}
	for _, f := range opts {
		f(&o)
	}
	h, err := pluginhost.New(o, []pluginhost.Spec{{Manifest: m}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h, m
}

func TestSandboxRoundTrip(t *testing.T) {
	h, m := newHost(t, "sandbox", "sandbox", []string{"echo"})
	ctx := context.Background()
	p, err := h.Start(ctx, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := p.Sandbox("echo")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := sb.Prepare(ctx, sandbox.PrepareRequest{RunID: "r1", Workspace: "/work"})
	if err != nil || sess.ID != "s-r1" {
		t.Fatalf("prepare = %+v, %v", sess, err)
	}
	var out, errOut strings.Builder
	exit, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"make", "test"}, Workdir: "/work", Env: map[string]string{"FOO": "bar"}},
		sandbox.IO{Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	if exit.Code != 7 || out.String() != "ran make test in /work\n" || errOut.String() != "env FOO=bar\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", exit.Code, out.String(), errOut.String())
	}
	// Stdin streams through, larger than one chunk.
	big := strings.Repeat("sparrow ", 20000)
	out.Reset()
	if _, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"cat"}}, sandbox.IO{Stdin: strings.NewReader(big), Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if out.String() != big {
		t.Fatalf("cat returned %d bytes, want %d", out.Len(), len(big))
	}
}

func TestExecCancelStopsCommand(t *testing.T) {
	h, m := newHost(t, "sandbox", "sandbox", []string{"echo"})
	p, err := h.Start(context.Background(), m.Name)
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := p.Sandbox("echo")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sleep"}}, sandbox.IO{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	// The plugin survives a cancelled call.
	if err := p.Ping(context.Background()); err != nil {
		t.Fatalf("ping after cancel: %v", err)
	}
}

func TestToolCallsBackThroughHost(t *testing.T) {
	var gotToken string
	var gotArgv []string
	h, m := newHost(t, "tool", "tool", []string{"run", "strict"}, func(o *pluginhost.Options) {
		o.Exec = func(_ context.Context, token string, req sandbox.ExecRequest, cio sandbox.IO) (sandbox.Exit, error) {
			gotToken, gotArgv = token, req.Argv
			io.WriteString(cio.Stdout, "main.go\n")
			return sandbox.Exit{Code: 0}, nil
		}
	})
	ctx := context.Background()
	p, err := h.Start(ctx, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := p.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Spec().Name != "run" || tools[0].Spec().Risk != tool.RiskExec || tools[1].Spec().PathArguments[0] != "path" {
		t.Fatalf("tools = %+v", tools)
	}
	var progress strings.Builder
	res, err := tools[0].Invoke(ctx, &tool.Call{ID: "c1", Arguments: []byte(`{"argv":["ls"]}`), Output: &progress, Token: "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "exit 0: main.go\n" || progress.String() != "running [ls]\n" {
		t.Fatalf("result %q, progress %q", res.Content, progress.String())
	}
	if gotToken != "tok-1" || len(gotArgv) != 1 || gotArgv[0] != "ls" {
		t.Fatalf("host saw token %q argv %v", gotToken, gotArgv)
	}
	// Without a token the kernel is never asked.
	res, err = tools[0].Invoke(ctx, &tool.Call{ID: "c2", Arguments: []byte(`{"argv":["ls"]}`)})
	if err == nil || !strings.Contains(err.Error(), "no Host access") {
		t.Fatalf("tokenless call: %+v, %v", res, err)
	}
	// A model's typo in arguments is a tool error, not a crash.
	res, err = tools[1].Invoke(ctx, &tool.Call{ID: "c3", Arguments: []byte(`{"pth":"x"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Content, `unknown field "pth"`) {
		t.Fatalf("typo: %+v, %v", res, err)
	}
}

func TestProviderStreamsAndTypedErrors(t *testing.T) {
	h, m := newHost(t, "provider", "provider", []string{"chatty"})
	ctx := context.Background()
	p, err := h.Start(ctx, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := p.Provider("chatty")
	if err != nil {
		t.Fatal(err)
	}
	models, err := pr.Models(ctx)
	if err != nil || len(models) != 1 || models[0].InputPricePerMTok != 1.5 {
		t.Fatalf("models = %+v, %v", models, err)
	}
	var text, args strings.Builder
	var usage *provider.Usage
	var stop provider.StopReason
	req := provider.Request{Model: "chatty-1", Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "sailor"}}}}}
	err = pr.Chat(ctx, req, func(e provider.Event) error {
		switch {
		case e.ToolCall != nil:
			args.WriteString(e.ToolCall.ArgumentsDelta)
		case e.Usage != nil:
			usage = e.Usage
		case e.Stop != "":
			stop = e.Stop
		case e.Thinking == nil:
			text.WriteString(e.Text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "Hello, sailor" || args.String() != `{"argv":["ls"]}` || usage.OutputTokens != 5 || stop != provider.StopToolUse {
		t.Fatalf("text %q args %q usage %+v stop %q", text.String(), args.String(), usage, stop)
	}
	req.Model = "rate-limited"
	err = pr.Chat(ctx, req, func(provider.Event) error { return nil })
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Class != provider.ErrRateLimited || perr.RetryAfter != 1500*time.Millisecond || perr.HTTPStatus != 429 {
		t.Fatalf("err = %#v", err)
	}
}

func TestEnvironmentIsOnlyWhatTheManifestDeclares(t *testing.T) {
	// The echo sandbox prints FOO from the request env, not its own; so
	// check the process environment through /proc instead.
	h, m := newHost(t, "sandbox", "sandbox", []string{"echo"})
	p, err := h.Start(context.Background(), m.Name)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID()))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	env := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "FOO" || name == "TEST_PLUGIN_MODE":
		case strings.HasPrefix(name, "PLUGIN_") || name == "SPARROW_PLUGIN_MAGIC_COOKIE":
		default:
			t.Errorf("plugin got undeclared variable %s", name)
		}
	}
	if !strings.Contains(string(raw), "FOO=declared") {
		t.Errorf("declared FOO missing from %q", env)
	}
}

func TestStartsOnceConcurrently(t *testing.T) {
	h, m := newHost(t, "sandbox", "sandbox", []string{"echo"})
	pids := make(chan int, 8)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			p, err := h.Start(context.Background(), m.Name)
			if err != nil {
				errs <- err
				return
			}
			pids <- p.PID()
		}()
	}
	first := 0
	for range 8 {
		select {
		case err := <-errs:
			t.Fatal(err)
		case pid := <-pids:
			if first == 0 {
				first = pid
			}
			if pid != first {
				t.Fatalf("plugin started twice: pids %d and %d", first, pid)
			}
		}
	}
}

func TestStartFailures(t *testing.T) {
	cases := []struct {
		mode, kind string
		components []string
		want       []string
	}{
		{"exit", "sandbox", []string{"echo"}, []string{"plugin p-exit: start:", "last stderr lines:\n    fatal: cannot open /etc/sparrow-test.conf"}},
		{"hang", "sandbox", []string{"echo"}, []string{"plugin p-hang: start:", "timeout while waiting for plugin to start", "warming up forever"}},
		{"garbage", "sandbox", []string{"echo"}, []string{"plugin p-garbage: start:", "Unrecognized remote plugin message: hello from a program", "may not be a Sparrow plugin"}},
		{"protocol2", "sandbox", []string{"echo"}, []string{"plugin p-protocol2 speaks protocol 2, this Sparrow needs 1"}},
		{"wrong-kind", "sandbox", []string{"echo"}, []string{"plugin p-wrong-kind: start:"}},
		{"sandbox", "sandbox", []string{"echo", "docker"}, []string{`the manifest lists component "docker"`}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			h, m := newHost(t, tc.mode, tc.kind, tc.components, func(o *pluginhost.Options) { o.StartTimeout = 1500 * time.Millisecond })
			_, err := h.Start(context.Background(), m.Name)
			if err == nil {
				t.Fatal("start succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			// The failure is remembered, not retried.
			_, again := h.Start(context.Background(), m.Name)
			if again == nil || again.Error() != err.Error() {
				t.Errorf("second start = %v", again)
			}
		})
	}
}

func TestSDKConstraintMismatchRefusesBeforeLaunch(t *testing.T) {
	m, diags := pluginhost.ReadManifest(testPlugin(t, "future", "sandbox", ">= 2.0.0", "echo"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	launched := false
	h, err := pluginhost.New(pluginhost.Options{LookupEnv: func(k string) (string, bool) {
		launched = true
		return "sandbox", k == "TEST_PLUGIN_MODE"
	}}, []pluginhost.Spec{{Manifest: m}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = h.Start(context.Background(), "future")
	var sdkErr *pluginhost.SDKError
	if !errors.As(err, &sdkErr) || !strings.Contains(err.Error(), "plugin future needs SDK >= 2.0.0, this Sparrow provides SDK 0.1.0") {
		t.Fatalf("err = %v", err)
	}
	if launched {
		t.Fatal("the plugin was launched despite its SDK range")
	}
}

func TestHashPin(t *testing.T) {
	path := testPlugin(t, "pinned", "sandbox", ">= 0.1.0", "echo")
	m, _ := pluginhost.ReadManifest(path)
	sum := fileSHA256(t, m.Entry)
	env := func(k string) (string, bool) { return "sandbox", k == "TEST_PLUGIN_MODE" }

	t.Run("match", func(t *testing.T) {
		h, _ := pluginhost.New(pluginhost.Options{LookupEnv: env}, []pluginhost.Spec{{Manifest: m, SHA256: sum, PinnedBy: "sparrow.hcl:3"}})
		defer h.Close()
		p, err := h.Start(context.Background(), "pinned")
		if err != nil {
			t.Fatal(err)
		}
		if p.SHA256 != sum {
			t.Fatalf("ran %s, want %s", p.SHA256, sum)
		}
	})
	t.Run("mismatch", func(t *testing.T) {
		wrong := strings.Repeat("ab", 32)
		h, _ := pluginhost.New(pluginhost.Options{LookupEnv: env}, []pluginhost.Spec{{Manifest: m, SHA256: wrong, PinnedBy: "sparrow.hcl:3"}})
		defer h.Close()
		_, err := h.Start(context.Background(), "pinned")
		var hm *pluginhost.HashMismatchError
		if !errors.As(err, &hm) || hm.Got != sum || !strings.Contains(err.Error(), "sparrow.hcl:3 pins "+wrong) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("upper-case pin", func(t *testing.T) {
		h, _ := pluginhost.New(pluginhost.Options{LookupEnv: env}, []pluginhost.Spec{{Manifest: m, SHA256: strings.ToUpper(sum), PinnedBy: "sparrow.hcl:3"}})
		defer h.Close()
		if _, err := h.Start(context.Background(), "pinned"); err != nil {
			t.Fatal(err)
		}
	})
	for _, bad := range []string{"not-hex", sum[:62]} {
		t.Run("malformed pin "+bad, func(t *testing.T) {
			h, _ := pluginhost.New(pluginhost.Options{LookupEnv: env}, []pluginhost.Spec{{Manifest: m, SHA256: bad, PinnedBy: "sparrow.hcl:3"}})
			defer h.Close()
			_, err := h.Start(context.Background(), "pinned")
			if err == nil || !strings.Contains(err.Error(), "pinned hash \""+bad+"\" is not a hex SHA-256") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestCrashMidStreamIsReportedByName(t *testing.T) {
	h, m := newHost(t, "provider-crash", "provider", []string{"chatty"})
	ctx := context.Background()
	p, err := h.Start(ctx, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := p.Provider("chatty")
	var got int
	err = pr.Chat(ctx, provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Text: "x"}}}}},
		func(provider.Event) error { got++; return nil })
	if err == nil {
		t.Fatal("chat succeeded against a crashing plugin")
	}
	// Give go-plugin a moment to notice the exit and collect stderr.
	deadline := time.Now().Add(5 * time.Second)
	for !p.Exited() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	err = pr.Chat(ctx, provider.Request{Model: "m"}, func(provider.Event) error { return nil })
	for _, w := range []string{"plugin p-provider-crash: provider chatty: chat", "the plugin process exited", "index out of range [3]"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if got == 0 {
		t.Error("no events arrived before the crash")
	}
}

func TestSandboxCrashMidExec(t *testing.T) {
	h, m := newHost(t, "sandbox", "sandbox", []string{"echo"})
	p, _ := h.Start(context.Background(), m.Name)
	sb, _ := p.Sandbox("echo")
	_, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"crash"}}, sandbox.IO{})
	if err == nil || !strings.Contains(err.Error(), "plugin p-sandbox: sandbox echo: exec") {
		t.Fatalf("err = %v", err)
	}
	// The kernel is still here, and says so about the next call too.
	if err := p.Ping(context.Background()); err == nil {
		t.Fatal("ping answered by a dead plugin")
	}
}

func TestGarbageResultIsRejected(t *testing.T) {
	h, m := newHost(t, "bad-tool", "tool", []string{"garbage"})
	p, err := h.Start(context.Background(), m.Name)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tools[0].Invoke(context.Background(), &tool.Call{Arguments: []byte(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "plugin p-bad-tool: tool garbage: invoke: tool garbage: result metadata is not JSON") {
		t.Fatalf("err = %v", err)
	}
}

func TestCloseKillsEveryPlugin(t *testing.T) {
	h, m := newHost(t, "sandbox", "sandbox", []string{"echo"})
	p, err := h.Start(context.Background(), m.Name)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.PID()
	h.Close()
	if alive(pid) {
		t.Fatalf("plugin %d outlived Close", pid)
	}
	if _, err := h.Start(context.Background(), m.Name); err == nil {
		t.Fatal("closed host handed out a plugin")
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestHostCallbackAfterIdle: a tool's first Host call may come long after
// its start (a sandbox that takes long to prepare); go-plugin's broker
// keeps the Host's connection info only five seconds.
func TestHostCallbackAfterIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("waits six seconds")
	}
	h, m := newHost(t, "tool", "tool", []string{"run"}, func(o *pluginhost.Options) {
		o.Exec = func(context.Context, string, sandbox.ExecRequest, sandbox.IO) (sandbox.Exit, error) {
			return sandbox.Exit{}, nil
		}
	})
	ctx := context.Background()
	p, err := h.Start(ctx, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := p.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	res, err := tools[0].Invoke(ctx, &tool.Call{ID: "c1", Arguments: []byte(`{"argv":["ls"]}`), Token: "tok"})
	if err != nil || res.Content != "exit 0: " {
		t.Fatalf("after idling: %+v, %v", res, err)
	}
}
