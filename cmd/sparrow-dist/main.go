// Command sparrow-dist is `make dist`: it cross-builds every first-party
// plugin (plugins/<kind>s/<name>/, entry in cmd/<entry>/) for each
// platform, lays the builds out as `sparrow plugin package` expects and
// packages them into one signed mirror (docs/publishing-plugins.md). A
// WASM plugin (runtime = "wasm", entry <cmd>.wasm built from cmd/<cmd>/)
// is built once, for GOOS=wasip1 GOARCH=wasm: its one platform is "wasm".
//
// The signing key is $SPARROW_RELEASE_KEY when set (a release), else a key
// made for the build in OUT/sparrow-build-key and reused by later runs
// until `make clean`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/pluginhost"
	"github.com/sparrow-cli/sparrow/kernel/pluginpkg"
	"github.com/sparrow-cli/sparrow/kernel/plugintrust"
)

// config is one run; flags fill it.
type config struct {
	// Root is the repository: plugins/ is under it, builds run in it.
	Root string
	// Out receives mirror/ and, without a release key, the build key.
	Out string
	// Platforms are "os/arch" pairs to build.
	Platforms []string
	// Go is the go command; Tags and LDFlags are passed to go build.
	Go, Tags, LDFlags string
	// ReleaseKey is a signing key file to use instead of a build key.
	ReleaseKey string
	// Jobs is how many builds run at once.
	Jobs   int
	Stdout io.Writer
}

func main() {
	cfg := config{Stdout: os.Stdout, ReleaseKey: os.Getenv("SPARROW_RELEASE_KEY")}
	var platforms string
	flag.StringVar(&cfg.Root, "root", ".", "the repository root")
	flag.StringVar(&cfg.Out, "out", "dist", "the output directory")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64", "comma-separated os/arch pairs")
	flag.StringVar(&cfg.Go, "go", "go", "the go command")
	flag.StringVar(&cfg.Tags, "tags", "", "go build -tags")
	flag.StringVar(&cfg.LDFlags, "ldflags", "", "go build -ldflags")
	flag.IntVar(&cfg.Jobs, "jobs", max(1, runtime.NumCPU()/2), "builds to run at once")
	flag.Parse()
	cfg.Platforms = strings.Split(platforms, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "sparrow-dist: %v\n", err)
		os.Exit(1)
	}
}

// firstParty is one plugin of the repository.
type firstParty struct {
	// entry is the file the manifest names; cmd is the directory under
	// dir/cmd/ it is built from.
	name, dir, entry, cmd string
	// wasm: runtime = "wasm", built once for wasip1/wasm.
	wasm bool
	// shared are the files beside plugin.hcl that every archive carries.
	shared []string
}

// target is one build of a plugin.
type target struct {
	// platform is "os/arch", or "wasm" for a WASM plugin.
	platform     string
	goos, goarch string
	// out is the build's path below the plugin's staging directory:
	// <os>_<arch>/<entry>, or <entry> for WASM (the module sits beside
	// plugin.hcl).
	out string
}

// targets are the builds of p for the given "os/arch" platforms.
func (p firstParty) targets(platforms []string) []target {
	if p.wasm {
		return []target{{platform: plugintrust.PlatformWASM, goos: "wasip1", goarch: "wasm", out: p.entry}}
	}
	var ts []target
	for _, plat := range platforms {
		goos, goarch, _ := strings.Cut(plat, "/")
		ts = append(ts, target{platform: plat, goos: goos, goarch: goarch, out: filepath.Join(goos+"_"+goarch, p.entry)})
	}
	return ts
}

func run(ctx context.Context, cfg config) error {
	start := time.Now()
	cfg.Stdout = &lockedWriter{w: cfg.Stdout}
	plugins, err := findPlugins(cfg.Root)
	if err != nil {
		return err
	}
	for _, p := range cfg.Platforms {
		if goos, goarch, ok := strings.Cut(p, "/"); !ok || goos == "" || goarch == "" {
			return fmt.Errorf("platform %q: want os/arch", p)
		}
	}
	key, keyNote, err := signingKey(cfg)
	if err != nil {
		return err
	}
	mirror := filepath.Join(cfg.Out, "mirror")
	staging := filepath.Join(cfg.Out, ".staging")
	// The mirror is a function of the tree: rebuilt whole, never patched.
	for _, d := range []string{mirror, staging} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	defer os.RemoveAll(staging)

	if err := buildAll(ctx, cfg, plugins, staging); err != nil {
		return err
	}
	built := time.Since(start)
	for _, p := range plugins {
		dir := filepath.Join(staging, p.name)
		for _, f := range append([]string{pluginhost.ManifestFile}, p.shared...) {
			if err := copyFile(filepath.Join(p.dir, f), filepath.Join(dir, f)); err != nil {
				return err
			}
		}
		res, err := pluginpkg.Package(dir, mirror, pluginpkg.Options{Key: &key})
		if err != nil {
			return fmt.Errorf("package %s: %w", p.name, err)
		}
		fmt.Fprintf(cfg.Stdout, "  packaged %s %s for %s\n", p.name, res.Release.Version, strings.Join(res.Release.PlatformNames(), ", "))
	}
	size, err := dirSize(mirror)
	if err != nil {
		return err
	}
	pub := key.Public()
	wasm := 0
	for _, p := range plugins {
		if p.wasm {
			wasm++
		}
	}
	once := ""
	if wasm > 0 {
		once = fmt.Sprintf(" (%d WASM, built once)", wasm)
	}
	fmt.Fprintf(cfg.Stdout, "\n%s%s × %s in %s: %.1f MiB, in %s (builds %s).\n",
		plural(len(plugins), "plugin"), once, plural(len(cfg.Platforms), "platform"), mirror, float64(size)/(1<<20),
		time.Since(start).Round(100*time.Millisecond), built.Round(100*time.Millisecond))
	fmt.Fprintf(cfg.Stdout, "Signed by %s\n  public key:  %s\n  fingerprint: %s\n", keyNote, pub, pub.Fingerprint())
	abs, err := filepath.Abs(mirror)
	if err != nil {
		abs = mirror
	}
	fmt.Fprintf(cfg.Stdout, "Trust it in policy.trusted_keys, or: sparrow plugin install NAME --mirror %s --trust-key %s\n", abs, pub)
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// findPlugins reads root/plugins/*/*/plugin.hcl, the Makefile's set.
func findPlugins(root string) ([]firstParty, error) {
	manifests, err := filepath.Glob(filepath.Join(root, "plugins", "*", "*", pluginhost.ManifestFile))
	if err != nil {
		return nil, err
	}
	var out []firstParty
	for _, mpath := range manifests {
		m, diags := pluginhost.ReadManifest(mpath)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %s", mpath, diags.Error())
		}
		dir := filepath.Dir(mpath)
		entry := filepath.Base(m.Entry)
		p := firstParty{name: m.Name, dir: dir, entry: entry, cmd: entry, wasm: m.Runtime == pluginhost.RuntimeWASM}
		if p.wasm {
			p.cmd = strings.TrimSuffix(entry, ".wasm")
		}
		if _, err := os.Stat(filepath.Join(dir, "cmd", p.cmd)); err != nil {
			return nil, fmt.Errorf("%s: entry %s has no cmd/%s/ to build", mpath, entry, p.cmd)
		}
		for _, f := range []string{"README.md", "LICENSE"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				p.shared = append(p.shared, f)
			}
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no plugins under %s", filepath.Join(root, "plugins"))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// signingKey is the release key when one is configured, else the build
// key in cfg.Out, made on first use.
func signingKey(cfg config) (plugintrust.PrivateKey, string, error) {
	if cfg.ReleaseKey != "" {
		k, err := plugintrust.ReadPrivateKey(cfg.ReleaseKey)
		return k, "the release key " + cfg.ReleaseKey + " ($SPARROW_RELEASE_KEY)", err
	}
	path := filepath.Join(cfg.Out, "sparrow-build-key")
	if k, err := plugintrust.ReadPrivateKey(path); err == nil {
		return k, "the build key " + path + " (reused; `make clean` discards it)", nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return plugintrust.PrivateKey{}, "", err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return plugintrust.PrivateKey{}, "", err
	}
	k, err := plugintrust.GenerateKey()
	if err == nil {
		err = plugintrust.WriteKeyFiles(path, k)
	}
	return k, "the build key " + path + " (new; for testing, not for a release)", err
}

// buildAll cross-builds every plugin for every platform into
// staging/<name>/<os>_<arch>/<entry> (a WASM plugin once, into
// staging/<name>/<entry>), cfg.Jobs at a time; the first failure cancels
// the rest.
func buildAll(ctx context.Context, cfg config, plugins []firstParty, staging string) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, max(1, cfg.Jobs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, p := range plugins {
		for _, t := range p.targets(cfg.Platforms) {
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				defer func() { <-sem }()
				if err := build(ctx, cfg, p, t, staging); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					cancel(err)
				}
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return context.Cause(ctx)
}

func build(ctx context.Context, cfg config, p firstParty, t target, staging string) error {
	out, err := filepath.Abs(filepath.Join(staging, p.name, t.out))
	if err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-o", out}
	if cfg.Tags != "" {
		args = append(args, "-tags", cfg.Tags)
	}
	if cfg.LDFlags != "" {
		args = append(args, "-ldflags", cfg.LDFlags)
	}
	args = append(args, "./cmd/"+p.cmd)
	cmd := exec.CommandContext(ctx, cfg.Go, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("build %s for %s: %v\n%s", p.name, t.platform, err, msg)
	}
	fmt.Fprintf(cfg.Stdout, "  built %s for %s\n", p.name, t.platform)
	return nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// lockedWriter serialises the builds' progress lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
