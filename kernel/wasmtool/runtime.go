package wasmtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// CacheVersion names the layout of Sparrow's compilation cache. Bump it
// when a change in this package makes old compiled code unusable; the
// cache then starts again in a new directory.
const CacheVersion = "1"

// Memory sizes are in 64 KiB WebAssembly pages.
const (
	// DefaultMaxMemoryPages is the ceiling when Options.MaxMemoryPages is
	// zero: 4096 pages, 256 MiB.
	DefaultMaxMemoryPages = 4096
	// maxMemoryPages is the largest ceiling: one page below the 4 GiB of
	// wasm32, so the runtime's static limit can sit one page above it.
	maxMemoryPages = 65535
)

// Options configure a Runtime.
type Options struct {
	// CacheDir is where compiled modules are kept between processes, in a
	// subdirectory named by CacheVersion and the wazero version. Empty
	// means an in-memory cache only, lost on Close.
	CacheDir string
	// MaxMemoryPages is the most linear memory any call may use, in 64 KiB
	// pages; a Call may ask for less. Zero means DefaultMaxMemoryPages.
	// At most 65535.
	MaxMemoryPages uint32
}

// Grants are the ambient abilities a module's manifest gives it. Without
// them the guest still links (Go's wasip1 port imports clock_time_get and
// random_get unconditionally) but sees deterministic fakes: a clock that
// starts at a fixed instant and ticks only as it is read, sleeps that
// return at once, and a fixed pseudo-random stream.
type Grants struct {
	// Clock gives the real wall clock, monotonic clock and sleeps.
	Clock bool
	// Random gives the host's cryptographic random source.
	Random bool
}

// Runtime compiles and runs WASM tools. It is safe for concurrent use.
// Close it to release the compiled code and the cache.
type Runtime struct {
	rt       wazero.Runtime
	cache    wazero.CompilationCache
	maxPages uint32

	closeOnce sync.Once
	closeErr  error
}

// New returns a Runtime with a compilation cache on disk under
// opts.CacheDir (created if missing) and the WASI host functions ready.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	maxPages := opts.MaxMemoryPages
	if maxPages == 0 {
		maxPages = DefaultMaxMemoryPages
	}
	if maxPages > maxMemoryPages {
		return nil, fmt.Errorf("wasm runtime: MaxMemoryPages %d is above the limit of %d", maxPages, maxMemoryPages)
	}
	var (
		cache wazero.CompilationCache
		err   error
	)
	if opts.CacheDir == "" {
		cache = wazero.NewCompilationCache()
	} else {
		dir := CachePath(opts.CacheDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("wasm runtime: create cache: %w", err)
		}
		if cache, err = wazero.NewCompilationCacheWithDir(dir); err != nil {
			return nil, fmt.Errorf("wasm runtime: open cache %s: %w", dir, err)
		}
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(true).
		// One page above the ceiling: every call's cap is at most the
		// ceiling and is enforced by its allocator (see limitedMemory),
		// which records the breach; this static limit is the backstop and
		// rejects, at load, a module whose initial memory is too big.
		WithMemoryLimitPages(maxPages + 1)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		_ = cache.Close(ctx)
		return nil, fmt.Errorf("wasm runtime: instantiate WASI: %w", err)
	}
	return &Runtime{rt: rt, cache: cache, maxPages: maxPages}, nil
}

// CachePath is the directory under cacheDir that a Runtime of this build
// uses. A new CacheVersion or wazero version gives a new directory; old
// ones can be deleted.
func CachePath(cacheDir string) string {
	return filepath.Join(cacheDir, "wasm", "v"+CacheVersion, "wazero-"+wazeroVersion())
}

// wazeroVersion is the wazero module version this binary was built with,
// or "devel" when the build carries no module information.
func wazeroVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				if d.Replace != nil {
					d = d.Replace
				}
				if d.Version != "" && d.Version != "(devel)" {
					return d.Version
				}
			}
		}
	}
	return "devel"
}

// Close releases every module, instance and compiled code of the Runtime
// and closes the cache. Calls still running are stopped. It is idempotent.
func (r *Runtime) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.closeErr = errors.Join(r.rt.Close(ctx), r.cache.Close(ctx))
	})
	return r.closeErr
}

// Load validates and compiles a module. name is the tool's name; it is
// the guest's argv[0] and appears in every error. The module must follow
// the ABI in docs/wasm-tools.md; anything else is refused here, before any
// call. Loading the same bytes again, in this process or a later one with
// the same CacheDir, reuses the compiled code.
func (r *Runtime) Load(ctx context.Context, wasm []byte, name string, grants Grants) (*Module, error) {
	if name == "" {
		return nil, errors.New("load wasm tool: empty name")
	}
	if err := checkInterface(wasm); err != nil {
		return nil, fmt.Errorf("load wasm tool %s: %w", name, err)
	}
	compiled, err := r.rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("load wasm tool %s: compile: %w", name, err)
	}
	mem, ok := compiled.ExportedMemories()["memory"]
	if !ok { // checkInterface saw it; the compiler disagrees.
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("load wasm tool %s: does not export its memory as \"memory\"", name)
	}
	return &Module{r: r, name: name, grants: grants, compiled: compiled, minPages: mem.Min()}, nil
}

// Module is a validated, compiled WASM tool. It is safe for concurrent
// calls: each call runs in its own instance.
type Module struct {
	r        *Runtime
	name     string
	grants   Grants
	compiled wazero.CompiledModule
	minPages uint32
}

// Name is the tool name the module was loaded under.
func (m *Module) Name() string { return m.name }

// Close releases the compiled module. The on-disk cache keeps its code.
func (m *Module) Close(ctx context.Context) error { return m.compiled.Close(ctx) }
