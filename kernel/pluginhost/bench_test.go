package pluginhost_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
)

// benchPlugin builds the out-of-tree example tool plugin the way a release
// is built (-trimpath -s -w) and lays out n copies under distinct names,
// returning their manifests.
func benchPlugins(b *testing.B, n int) []*pluginhost.Manifest {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "hello-tool.bin")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "examples", "hello-tool")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build example: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(cmd.Dir, pluginhost.ManifestFile))
	if err != nil {
		b.Fatal(err)
	}
	var out []*pluginhost.Manifest
	for i := range n {
		name := fmt.Sprintf("hello-%d", i)
		pdir := filepath.Join(dir, name)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.Link(bin, filepath.Join(pdir, "hello-tool")); err != nil {
			b.Fatal(err)
		}
		manifest := strings.Replace(string(src), `plugin "hello-tool"`, fmt.Sprintf("plugin %q", name), 1)
		path := filepath.Join(pdir, pluginhost.ManifestFile)
		if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
			b.Fatal(err)
		}
		m, diags := pluginhost.ReadManifest(path)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		out = append(out, m)
	}
	return out
}

func specsOf(ms []*pluginhost.Manifest) []pluginhost.Spec {
	specs := make([]pluginhost.Spec, len(ms))
	for i, m := range ms {
		specs[i] = pluginhost.Spec{Manifest: m}
	}
	return specs
}

// BenchmarkStartToFirstCall measures, from an empty host, verifying,
// launching and handshaking n plugins in parallel until each has answered
// its first call (Describe).
func BenchmarkStartToFirstCall(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) { benchStart(b, n, pluginhost.Options{}) })
	}
}

// BenchmarkConfinedStartToFirstCall is BenchmarkStartToFirstCall with each
// tool plugin confined (bubblewrap, Landlock, seccomp; the test binary is
// the init), as the sparrow binary launches them.
func BenchmarkConfinedStartToFirstCall(b *testing.B) {
	if !confine.Probe(context.Background()).Usable() {
		b.Skip("plugins cannot be confined here")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			benchStart(b, n, pluginhost.Options{ConfineInit: self, Workspace: b.TempDir()})
		})
	}
}

func benchStart(b *testing.B, n int, opts pluginhost.Options) {
	ms := benchPlugins(b, n)
	ctx := context.Background()
	for b.Loop() {
		h, err := pluginhost.New(opts, specsOf(ms))
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, m := range ms {
			wg.Go(func() {
				p, err := h.Start(ctx, m.Name)
				if err == nil {
					_, err = p.Tools(ctx)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		b.StopTimer()
		h.Close()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
}

// BenchmarkUnaryRoundTrip measures one unary gRPC call to a running plugin
// over its AutoMTLS unix socket.
func BenchmarkUnaryRoundTrip(b *testing.B) {
	ms := benchPlugins(b, 1)
	h, _ := pluginhost.New(pluginhost.Options{}, specsOf(ms))
	defer h.Close()
	ctx := context.Background()
	p, err := h.Start(ctx, ms[0].Name)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := p.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdlePluginRSS reports the resident memory of one started, idle
// plugin process (rss-KiB), read from /proc.
func BenchmarkIdlePluginRSS(b *testing.B) {
	ms := benchPlugins(b, 1)
	var total float64
	for b.Loop() {
		h, _ := pluginhost.New(pluginhost.Options{}, specsOf(ms))
		p, err := h.Start(context.Background(), ms[0].Name)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		time.Sleep(300 * time.Millisecond) // let start-up garbage settle
		total += float64(rssKiB(b, p.PID()))
		h.Close()
		b.StartTimer()
	}
	b.ReportMetric(total/float64(b.N), "rss-KiB")
}

func rssKiB(b *testing.B, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
