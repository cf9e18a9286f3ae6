package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/sparrow-cli/sparrow/kernel/wasmtool"
	"github.com/sparrow-cli/sparrow/sdk"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/sandbox/confine"
	"github.com/sparrow-cli/sparrow/sdk/surface"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// DefaultStartTimeout bounds a plugin's start, from exec to its first
// answer.
const DefaultStartTimeout = 10 * time.Second

// stderrLines is how many stderr lines are kept per plugin for reports.
const stderrLines = 20

// Options configure a Host. The zero value works: no Host service for
// plugins, logs discarded, the process environment as the source of
// declared variables.
type Options struct {
	// SparrowVersion is told to plugins in Info.
	SparrowVersion string
	// Logger receives plugin logs. Sparrow points it at its log file.
	Logger hclog.Logger
	// LookupEnv reads the host environment for the names a manifest
	// declares. Defaults to os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// StartTimeout bounds a start; zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// Exec serves the Host service plugins call back into; nil offers
	// plugins no Host.
	Exec sandbox.HostHandler
	// ConfineInit is the host path of a binary whose main calls
	// confine.Init first (the sparrow executable). When set and this
	// machine has the primitives, every plugin process but sandbox
	// backends runs confined to what its manifest declares; when empty,
	// plugins run unconfined. See [Host.Confinement].
	ConfineInit string
	// Workspace is the directory confined tool plugins (and surfaces that
	// declare it) get read-write; see also [Host.SetWorkspace].
	Workspace string
	// CacheDir keeps what is worth keeping between processes: compiled
	// WASM modules (see wasmtool.Options.CacheDir) and the confinement
	// probe's answer (confine.ProbeCached), so a start does not run
	// bubblewrap twice before its first confined plugin. Empty keeps
	// nothing.
	CacheDir string
	// HidePath reports whether a workspace-relative path (slash-separated)
	// is denied: WASM tools can neither see nor touch such paths. nil
	// hides nothing.
	HidePath func(rel string) bool
}

// Spec is one plugin the host may start.
type Spec struct {
	Manifest *Manifest
	// SHA256 pins the entry's hash, overriding the manifest's own pin.
	SHA256 string
	// PinnedBy says where SHA256 came from, for error messages.
	PinnedBy string
	// Files are host files a confined plugin may read beyond its
	// manifest's paths: those its components' configuration names.
	Files []string
}

// Host starts and supervises plugin processes.
type Host struct {
	opts    Options
	mu      sync.Mutex
	entries map[string]*entry
	closed  bool
	// workspace is what tool plugins get; see SetWorkspace.
	workspace string

	probeOnce   sync.Once
	confinement Confinement

	wasmOnce sync.Once
	wasm     *wasmtool.Runtime
	wasmErr  error
}

type entry struct {
	spec Spec
	mu   sync.Mutex
	done bool
	p    *Plugin
	err  error
}

// New returns a Host for the given plugins. Names must be unique.
func New(opts Options, specs []Spec) (*Host, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	h := &Host{opts: opts, entries: map[string]*entry{}}
	if opts.Workspace != "" {
		h.workspace = filepath.Clean(opts.Workspace)
	}
	for _, s := range specs {
		name := s.Manifest.Name
		if prev, dup := h.entries[name]; dup {
			return nil, fmt.Errorf("plugin %s is defined twice: %s and %s", name, prev.spec.Manifest.File, s.Manifest.File)
		}
		h.entries[name] = &entry{spec: s}
	}
	return h, nil
}

// Manifests lists the known plugins by name.
func (h *Host) Manifests() []*Manifest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*Manifest
	for _, e := range h.entries {
		out = append(out, e.spec.Manifest)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Start starts the named plugin, or returns it if it already started. A
// plugin is started at most once: a failure is remembered and returned to
// every later caller. Starts of different plugins run in parallel.
func (h *Host) Start(ctx context.Context, name string) (*Plugin, error) {
	h.mu.Lock()
	e, ok := h.entries[name]
	closed := h.closed
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no plugin named %s", name)
	}
	if closed {
		return nil, fmt.Errorf("plugin %s: the plugin host is closed", name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done && e.p != nil && e.p.staleWorkspace(h.currentWorkspace()) {
		e.p.kill()
		e.done, e.p = false, nil
	}
	if !e.done {
		e.p, e.err = h.launch(ctx, e.spec)
		e.done = true
	}
	return e.p, e.err
}

// StartAll starts the named plugins in parallel and returns every failure.
func (h *Host) StartAll(ctx context.Context, names ...string) error {
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { _, errs[i] = h.Start(ctx, n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops every started plugin and its process group, in parallel.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	entries := make([]*entry, 0, len(h.entries))
	for _, e := range h.entries {
		entries = append(entries, e)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Go(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.p != nil {
				e.p.kill()
			}
		})
	}
	wg.Wait()
	// Once done, no runtime can be created; one that was is closed.
	h.wasmOnce.Do(func() { h.wasmErr = errors.New("the plugin host is closed") })
	if h.wasm != nil {
		_ = h.wasm.Close(context.Background())
	}
}

func (h *Host) launch(ctx context.Context, spec Spec) (*Plugin, error) {
	m := spec.Manifest
	var acc *access
	var run *procRunner
	fail := func(err error, stderr *stderrTail) (*Plugin, error) {
		e := &Error{Plugin: m.Name, Op: "start", Err: err}
		if stderr != nil {
			e.Stderr = stderr.Lines()
		}
		if acc != nil && run != nil && run.wasStarted() {
			e.Confined = acc.String()
		}
		return nil, e
	}
	if m.Runtime == RuntimeWASM {
		return h.launchWASM(ctx, spec)
	}
	if v := semver.MustParse(sdk.Version); !m.SDK.Check(v) {
		return nil, &SDKError{Plugin: m.Name, Constraint: m.SDKRange, SDK: sdk.Version}
	}
	pin, pinnedBy := spec.SHA256, spec.PinnedBy
	if pin == "" && m.SHA256 != "" {
		pin, pinnedBy = m.SHA256, m.File
	}
	// The first start probes for confinement while the entry is hashed.
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		if m.Kind != plugin.KindSandbox {
			h.Confinement(ctx)
		}
	}()
	exe, err := verifyEntry(m.Entry, pin, pinnedBy)
	<-probed
	if err != nil {
		return fail(err, nil)
	}
	// Once the process started it holds its own reference to the bytes.
	defer exe.Close()
	stderr := newStderrTail(stderrLines)
	granted := hostEnv(m.Capabilities.Env, h.opts.LookupEnv)
	if m.Kind == plugin.KindSandbox && h.opts.ConfineInit != "" {
		// A sandbox backend may confine its commands with the same init
		// the kernel confines plugins with (see confine.CheckInit).
		granted = append(granted, confine.InitEnv+"="+h.opts.ConfineInit)
	}
	acc = h.accessFor(ctx, spec)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  plugin.Handshake(),
		VersionedPlugins: map[int]goplugin.PluginSet{sdk.ProtocolVersion: {string(m.Kind): h.kindPlugin(m.Kind)}},
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, socketDir string) (runner.Runner, error) {
			var err error
			run, err = h.newRunner(m, acc, exe, append(cmd.Env, granted...), socketDir)
			if err != nil {
				// go-plugin removes the directory only once a runner exists.
				os.RemoveAll(socketDir)
			}
			return run, err
		},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     h.opts.StartTimeout,
		Stderr:           stderr,
		// What a plugin prints after the handshake is relayed over gRPC;
		// it belongs in the same tail as its raw stderr.
		SyncStdout: stderr,
		SyncStderr: stderr,
		Logger:     h.opts.Logger.Named(m.Name),
	})
	p := &Plugin{Manifest: m, SHA256: exe.SHA256, client: client, stderr: stderr, confined: acc}
	rpc, err := client.Client()
	if run != nil {
		p.runner = run
	}
	if err != nil {
		p.kill()
		if acc != nil {
			// A remembered probe may be stale (a sysctl changed since):
			// the next process probes again.
			h.forgetProbe()
		}
		if run != nil {
			if has := run.stdout.protocol(); has != 0 && has != sdk.ProtocolVersion {
				return nil, &ProtocolError{Plugin: m.Name, Has: has, Want: sdk.ProtocolVersion}
			}
		}
		return fail(err, stderr)
	}
	raw, err := rpc.Dispense(string(m.Kind))
	if err != nil {
		p.kill()
		return fail(fmt.Errorf("dispense %s: %w", m.Kind, err), stderr)
	}
	p.raw = raw
	if err := p.handshake(ctx, h.opts); err != nil {
		p.kill()
		var sdkErr *SDKError
		if errors.As(err, &sdkErr) {
			return nil, err
		}
		return fail(err, stderr)
	}
	return p, nil
}

// kindPlugin is the kernel side of a kind's go-plugin glue, offering the
// Host service when the host has one.
func (h *Host) kindPlugin(k plugin.Kind) goplugin.Plugin {
	var reg plugin.HostRegistrar
	if h.opts.Exec != nil {
		reg = func(s *grpc.Server) { sandbox.RegisterHost(s, h.opts.Exec) }
	}
	switch k {
	case plugin.KindProvider:
		return &provider.Plugin{Host: reg}
	case plugin.KindTool:
		return &tool.Plugin{Host: reg}
	case plugin.KindSandbox:
		return &sandbox.Plugin{Host: reg}
	default:
		return &surface.Plugin{Host: reg}
	}
}

// killGroup SIGKILLs a process group, ignoring one already gone.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
