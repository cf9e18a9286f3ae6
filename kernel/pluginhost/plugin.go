package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/Masterminds/semver/v3"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// Plugin is a started plugin process.
type Plugin struct {
	Manifest *Manifest
	// Info is what the plugin said about itself at start.
	Info plugin.Info
	// SHA256 is the hash of the bytes that run.
	SHA256 string

	client *goplugin.Client
	runner *procRunner
	raw    any
	stderr *stderrTail
	// confined is what the process was confined to; nil when unconfined.
	confined *access
	// module is set instead of client for a WASM plugin.
	module *wasmModule
}

// Confinement lists what the plugin process was confined to ("network
// off (not declared), workspace not mounted, home empty, ..."), or is
// empty when it runs unconfined.
func (p *Plugin) Confinement() string {
	if p.confined == nil {
		return ""
	}
	return p.confined.String()
}

// staleWorkspace reports whether the plugin was confined with a workspace
// other than ws, which its kind should have.
func (p *Plugin) staleWorkspace(ws string) bool {
	if p.confined == nil {
		return false
	}
	switch p.Manifest.Kind {
	case plugin.KindTool:
	case plugin.KindSurface:
		if !p.Manifest.Capabilities.Workspace {
			return false
		}
	default:
		return false
	}
	return p.confined.workspace != ws
}

// base is the base contract every kind's client embeds.
type base interface {
	Info(ctx context.Context, sparrowVersion string) (plugin.Info, error)
	Schema(ctx context.Context, component string) (plugin.Schema, error)
	Configure(ctx context.Context, component string, cfg plugin.Config) error
}

// handshake asks the plugin what it is and checks it against its manifest.
func (p *Plugin) handshake(ctx context.Context, opts Options) error {
	b, ok := p.raw.(base)
	if !ok {
		return fmt.Errorf("internal: %T lacks the base contract", p.raw)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	info, err := b.Info(ctx, opts.SparrowVersion)
	if err != nil {
		return fmt.Errorf("info: %w", err)
	}
	m := p.Manifest
	if info.Kind != m.Kind {
		return fmt.Errorf("the manifest says kind %s, the plugin reports %s", m.Kind, info.Kind)
	}
	v, err := semver.NewVersion(info.SDKVersion)
	if err != nil || !m.SDK.Check(v) {
		return &SDKError{Plugin: m.Name, Constraint: m.SDKRange, SDK: info.SDKVersion, Reported: true}
	}
	var served []string
	for _, c := range info.Components {
		served = append(served, c.Name)
	}
	for _, c := range m.Components {
		if !slices.Contains(served, c) {
			return fmt.Errorf("the manifest lists component %q, the plugin serves %q", c, served)
		}
	}
	p.Info = info
	return nil
}

// PID is the plugin's process id, 0 when it never ran.
func (p *Plugin) PID() int {
	if p.runner == nil {
		return 0
	}
	n, _ := strconv.Atoi(p.runner.ID())
	return n
}

// Exited reports whether the plugin process has ended. A WASM plugin has
// no process: each call is its own instance.
func (p *Plugin) Exited() bool { return p.client != nil && p.client.Exited() }

// Stderr returns the plugin's last stderr lines.
func (p *Plugin) Stderr() []string {
	if p.stderr == nil {
		return nil
	}
	return p.stderr.Lines()
}

// Ping checks the plugin works; doctor and `plugin list --check` use it.
// A gRPC plugin answers Info again; a WASM plugin's module is compiled.
func (p *Plugin) Ping(ctx context.Context) error {
	if p.module != nil {
		return p.Compile(ctx)
	}
	_, err := p.raw.(base).Info(ctx, "")
	return p.wrap("ping", err)
}

// Schema returns a component's configuration schema.
func (p *Plugin) Schema(ctx context.Context, component string) (plugin.Schema, error) {
	if p.module != nil {
		return wasmSchema(), p.component(plugin.KindTool, component)
	}
	s, err := p.raw.(base).Schema(ctx, component)
	return s, p.wrap(component+": schema", err)
}

// Configure hands a component its configuration.
func (p *Plugin) Configure(ctx context.Context, component string, cfg plugin.Config) error {
	if p.module != nil {
		if err := p.module.configure(component, cfg); err != nil {
			return &Error{Plugin: p.Manifest.Name, Op: component + ": configure", Err: err}
		}
		return nil
	}
	return p.wrap(component+": configure", p.raw.(base).Configure(ctx, component, cfg))
}

func (p *Plugin) kill() {
	if p.module != nil {
		p.module.close()
		return
	}
	p.client.Kill()
	if p.runner != nil {
		killGroup(p.PID())
	}
}

// wrap names the plugin in err and, when the process died, adds its last
// stderr lines. Cancellation passes through untouched.
func (p *Plugin) wrap(op string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// A call cut short by the caller's context surfaces as a status; give
	// the caller back the context error it can test for.
	switch status.Code(err) {
	case codes.Canceled:
		return context.Canceled
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	}
	e := &Error{Plugin: p.Manifest.Name, Op: op, Err: err}
	if p.Exited() {
		e.Err = fmt.Errorf("the plugin process exited: %w", err)
		e.Stderr = p.stderr.Lines()
		e.Confined = p.Confinement()
	}
	return e
}

func (p *Plugin) component(kind plugin.Kind, name string) error {
	if p.Manifest.Kind != kind {
		return fmt.Errorf("plugin %s is a %s plugin, not a %s plugin", p.Manifest.Name, p.Manifest.Kind, kind)
	}
	for _, c := range p.Info.Components {
		if c.Name == name {
			return nil
		}
	}
	return fmt.Errorf("plugin %s serves no %s %q", p.Manifest.Name, kind, name)
}

// Sandbox returns the plugin's named sandbox backend.
func (p *Plugin) Sandbox(name string) (sandbox.Sandbox, error) {
	if err := p.component(plugin.KindSandbox, name); err != nil {
		return nil, err
	}
	return &sandboxProxy{p: p, s: p.raw.(*sandbox.Client).Sandbox(name)}, nil
}

// Provider returns the plugin's named provider.
func (p *Plugin) Provider(name string) (provider.Provider, error) {
	if err := p.component(plugin.KindProvider, name); err != nil {
		return nil, err
	}
	return &providerProxy{p: p, pr: p.raw.(*provider.Client).Provider(name)}, nil
}
