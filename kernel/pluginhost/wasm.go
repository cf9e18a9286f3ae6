package pluginhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/sparrow-cli/sparrow/kernel/wasmtool"
	"github.com/sparrow-cli/sparrow/sdk"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// WASM limits: the memory a call gets when its manifest names none, and
// the most any manifest or config may give.
const (
	defaultWASMMemory = 256 << 20
	maxWASMMemory     = 1 << 30
	wasmPageSize      = 64 << 10
	// maxModuleBytes bounds what is read of an entry file.
	maxModuleBytes = 256 << 20
)

// wasmModule is a started WASM plugin: its verified code, compiled at the
// first call, and each tool's limits once configured.
type wasmModule struct {
	host   *Host
	name   string
	grants wasmtool.Grants
	// hide is Options.HidePath.
	hide func(string) bool

	loadMu sync.Mutex
	// code is the verified module until it is compiled; module is the
	// compiled one and loadErr a compile failure, kept so a bad module
	// fails every call the same way.
	code    []byte
	module  *wasmtool.Module
	loadErr error

	mu     sync.Mutex
	limits map[string]WASMTool
}

// compiled returns the compiled module, compiling it on first use: a run
// that never calls the plugin's tools never pays for the compile (about
// 0.1 s and tens of MB for a Go guest, even from the on-disk cache).
func (w *wasmModule) compiled(ctx context.Context) (*wasmtool.Module, error) {
	w.loadMu.Lock()
	defer w.loadMu.Unlock()
	if w.module != nil || w.loadErr != nil {
		return w.module, w.loadErr
	}
	rt, err := w.host.wasmRuntime(ctx)
	if err != nil {
		return nil, err
	}
	mod, err := rt.Load(ctx, w.code, w.name, w.grants)
	if err != nil {
		if ctx.Err() == nil {
			w.loadErr = err
		}
		return nil, err
	}
	w.module, w.code = mod, nil
	return mod, nil
}

// close releases the compiled code, if any.
func (w *wasmModule) close() {
	w.loadMu.Lock()
	defer w.loadMu.Unlock()
	if w.module != nil {
		_ = w.module.Close(context.Background())
	}
}

// wasmRuntime returns the Host's WASM runtime, created on first use with
// its compilation cache under Options.CacheDir.
func (h *Host) wasmRuntime(ctx context.Context) (*wasmtool.Runtime, error) {
	h.wasmOnce.Do(func() {
		h.wasm, h.wasmErr = wasmtool.New(ctx, wasmtool.Options{CacheDir: h.opts.CacheDir, MaxMemoryPages: maxWASMMemory / wasmPageSize})
	})
	return h.wasm, h.wasmErr
}

// launchWASM reads and verifies a WASM plugin's module: its hash, and its
// interface (exports, WASI-only imports), so a bad module is refused at
// start. It is compiled at the first call (or by Compile). Nothing runs:
// the manifest says what the tools are, and each call runs the module in
// a fresh instance.
func (h *Host) launchWASM(ctx context.Context, spec Spec) (*Plugin, error) {
	m := spec.Manifest
	fail := func(err error) (*Plugin, error) { return nil, &Error{Plugin: m.Name, Op: "start", Err: err} }
	if v := semver.MustParse(sdk.Version); !m.SDK.Check(v) {
		return nil, &SDKError{Plugin: m.Name, Constraint: m.SDKRange, SDK: sdk.Version}
	}
	pin, pinnedBy := spec.SHA256, spec.PinnedBy
	if pin == "" && m.SHA256 != "" {
		pin, pinnedBy = m.SHA256, m.File
	}
	code, sum, err := readModule(m.Entry, pin, pinnedBy)
	if err != nil {
		return fail(err)
	}
	if err := wasmtool.Validate(code); err != nil {
		return fail(fmt.Errorf("load wasm tool %s: %w", m.Name, err))
	}
	for _, t := range m.Tools {
		if t.MemoryBytes > maxWASMMemory {
			return fail(fmt.Errorf("tool %s asks for %d MiB of memory; the most a WASM tool may have is %d MiB", t.Spec.Name, t.MemoryBytes>>20, maxWASMMemory>>20))
		}
	}
	info := plugin.Info{Kind: plugin.KindTool, SDKVersion: sdk.Version}
	limits := map[string]WASMTool{}
	for _, t := range m.Tools {
		info.Components = append(info.Components, plugin.ComponentInfo{Name: t.Spec.Name, Description: firstLine(t.Spec.Description)})
		limits[t.Spec.Name] = t
	}
	return &Plugin{Manifest: m, Info: info, SHA256: sum, module: &wasmModule{host: h, name: m.Name, code: code,
		grants: wasmtool.Grants{Clock: m.Capabilities.Clock, Random: m.Capabilities.Random}, hide: h.opts.HidePath, limits: limits}}, nil
}

// Compile compiles a WASM plugin's module now instead of at its first
// call (`plugin list --check`); for a gRPC plugin it does nothing.
func (p *Plugin) Compile(ctx context.Context) error {
	if p.module == nil {
		return nil
	}
	if _, err := p.module.compiled(ctx); err != nil {
		return fmt.Errorf("plugin %s: %w", p.Manifest.Name, err)
	}
	return nil
}

// readModule reads a module into memory, hashing it, and checks the hash
// against want when set: the bytes checked are the bytes compiled.
func readModule(path, want, pinnedBy string) ([]byte, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	// Read into one buffer of the file's size, not one grown by doubling
	// (a module is megabytes); the limit still holds if the file grows.
	// bytes.Buffer wants MinRead bytes free before each read, the last
	// one (which sees the end) included.
	size := int64(bytes.MinRead)
	if fi, err := f.Stat(); err == nil {
		size += min(fi.Size(), maxModuleBytes+1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err = buf.ReadFrom(io.LimitReader(f, maxModuleBytes+1))
	code := buf.Bytes()
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(code) > maxModuleBytes {
		return nil, "", fmt.Errorf("%s is larger than %d MiB; refusing to load it", path, maxModuleBytes>>20)
	}
	h := sha256.Sum256(code)
	sum := hex.EncodeToString(h[:])
	if want != "" && !strings.EqualFold(want, sum) {
		return nil, "", &HashMismatchError{Path: path, Want: want, Got: sum, PinnedBy: pinnedBy}
	}
	return code, sum, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// wasmSchema is the configuration a WASM tool accepts: limits that may
// only tighten what its manifest (or the default) allows.
func wasmSchema() plugin.Schema {
	return plugin.Schema{Attributes: []plugin.Attribute{
		{Name: "timeout", Type: plugin.Duration, Description: "wall-time limit per call, at most the manifest's"},
		{Name: "memory", Type: plugin.String, Description: "memory cap per call, such as \"64MiB\", at most the manifest's"},
		{Name: "max_output", Type: plugin.String, Description: "output cap per call, such as \"256KiB\", at most the manifest's"},
	}}
}

// configure applies a tool block's limits; each may only tighten.
func (w *wasmModule) configure(name string, cfg plugin.Config) error {
	var v struct {
		Timeout   string `json:"timeout"`
		Memory    string `json:"memory"`
		MaxOutput string `json:"max_output"`
	}
	if err := cfg.Decode(&v); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.limits[name]
	if !ok {
		return fmt.Errorf("no tool %q", name)
	}
	if v.Timeout != "" {
		d, err := time.ParseDuration(v.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("timeout %q: want a duration such as \"10s\"", v.Timeout)
		}
		if limit := orDefault(t.Timeout, wasmtool.DefaultTimeout); d > limit {
			return fmt.Errorf("timeout %s is above the tool's %s; config may only tighten a WASM tool's limits", d, limit)
		}
		t.Timeout = d
	}
	tighten := func(attr, s string, dst *int64, limit int64) error {
		if s == "" {
			return nil
		}
		n, err := sandbox.ParseSize(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s %q: want a size such as \"64MiB\"", attr, s)
		}
		if n > limit {
			return fmt.Errorf("%s %s is above the tool's %d bytes; config may only tighten a WASM tool's limits", attr, s, limit)
		}
		*dst = n
		return nil
	}
	if err := tighten("memory", v.Memory, &t.MemoryBytes, orDefault(t.MemoryBytes, defaultWASMMemory)); err != nil {
		return err
	}
	if err := tighten("max_output", v.MaxOutput, &t.MaxOutputBytes, orDefault(t.MaxOutputBytes, wasmtool.DefaultMaxOutputBytes)); err != nil {
		return err
	}
	w.limits[name] = t
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// wasmTools returns the plugin's tools, which run its module.
func (p *Plugin) wasmTools() []tool.Tool {
	out := make([]tool.Tool, len(p.Manifest.Tools))
	for i, t := range p.Manifest.Tools {
		out[i] = &wasmToolProxy{p: p, spec: t.Spec}
	}
	return out
}

// wasmToolProxy is one tool of a WASM plugin. To the engine and the gate
// it is a tool like any other.
type wasmToolProxy struct {
	p    *Plugin
	spec tool.Spec
}

func (x *wasmToolProxy) Spec() tool.Spec { return x.spec }

// Invoke runs the module once. The workspace is writable only for a tool
// whose declared risk changes files: the engine invokes a tool only after
// the gate allowed the call, so a read-only tool never gets more than a
// read-only view. A breached limit, trap or bad exit is an error naming
// the plugin and the tool; the tool's own error is an error result.
func (x *wasmToolProxy) Invoke(ctx context.Context, call *tool.Call) (tool.Result, error) {
	w := x.p.module
	w.mu.Lock()
	lim := w.limits[x.spec.Name]
	w.mu.Unlock()
	mem := orDefault(lim.MemoryBytes, defaultWASMMemory)
	var res wasmtool.Result
	mod, err := w.compiled(ctx)
	if err == nil {
		res, err = mod.Call(ctx, wasmtool.Call{
			Tool: x.spec.Name, Args: call.Arguments, Workspace: call.Workspace, Hide: w.hide,
			Writable:       x.spec.Risk == tool.RiskMutating || x.spec.Risk == tool.RiskDestructive,
			Timeout:        lim.Timeout,
			MaxOutputBytes: int(lim.MaxOutputBytes),
			MaxMemoryPages: uint32((mem + wasmPageSize - 1) / wasmPageSize),
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopped by the caller, as a gRPC tool's call would be.
			return tool.Result{}, ctx.Err()
		}
		// A compile failure says "load wasm tool NAME: ...", a
		// *wasmtool.CallError "tool NAME: ...".
		return tool.Result{}, fmt.Errorf("plugin %s: %w", x.p.Manifest.Name, err)
	}
	if res.Error != "" {
		return tool.Result{Content: res.Error, IsError: true}, nil
	}
	return tool.Result{Content: res.Output}, nil
}
