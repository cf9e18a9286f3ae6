package pluginhost

import (
	"context"
	"fmt"

	"github.com/sparrow-cli/sparrow/sdk/plugin"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/surface"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// The proxies below name the plugin in every error a component returns, so
// a crash mid-call reads "plugin local: sandbox local: exec: ..." with the
// plugin's last stderr lines, never a bare gRPC status.

// Tools describes the plugin's tools.
func (p *Plugin) Tools(ctx context.Context) ([]tool.Tool, error) {
	if p.Manifest.Kind != plugin.KindTool {
		return nil, fmt.Errorf("plugin %s is a %s plugin, not a tool plugin", p.Manifest.Name, p.Manifest.Kind)
	}
	if p.module != nil {
		return p.wasmTools(), nil
	}
	tools, err := p.raw.(*tool.Client).Tools(ctx)
	if err != nil {
		return nil, p.wrap("describe tools", err)
	}
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		out[i] = &toolProxy{p: p, t: t}
	}
	return out, nil
}

// Surface returns the plugin's named surface. Close its delivery stream
// with Close when done.
func (p *Plugin) Surface(name string) (*SurfaceProxy, error) {
	if err := p.component(plugin.KindSurface, name); err != nil {
		return nil, err
	}
	return &SurfaceProxy{p: p, r: p.raw.(*surface.Client).Surface(name)}, nil
}

type sandboxProxy struct {
	p *Plugin
	s sandbox.Sandbox
}

func (x *sandboxProxy) Name() string { return x.s.Name() }

func (x *sandboxProxy) op(what string) string { return "sandbox " + x.s.Name() + ": " + what }

func (x *sandboxProxy) Capabilities(ctx context.Context) (sandbox.Capabilities, error) {
	c, err := x.s.Capabilities(ctx)
	return c, x.p.wrap(x.op("capabilities"), err)
}

func (x *sandboxProxy) Prepare(ctx context.Context, req sandbox.PrepareRequest) (sandbox.Session, error) {
	s, err := x.s.Prepare(ctx, req)
	return s, x.p.wrap(x.op("prepare"), err)
}

func (x *sandboxProxy) Exec(ctx context.Context, req sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	e, err := x.s.Exec(ctx, req, io)
	return e, x.p.wrap(x.op("exec"), err)
}

func (x *sandboxProxy) Teardown(ctx context.Context, id string) (sandbox.Released, error) {
	r, err := x.s.Teardown(ctx, id)
	return r, x.p.wrap(x.op("teardown"), err)
}

type providerProxy struct {
	p  *Plugin
	pr provider.Provider
}

func (x *providerProxy) Name() string { return x.pr.Name() }

func (x *providerProxy) Models(ctx context.Context) ([]provider.Model, error) {
	m, err := x.pr.Models(ctx)
	return m, x.p.wrap("provider "+x.pr.Name()+": models", err)
}

func (x *providerProxy) Chat(ctx context.Context, req provider.Request, send func(provider.Event) error) error {
	return x.p.wrap("provider "+x.pr.Name()+": chat", x.pr.Chat(ctx, req, send))
}

type toolProxy struct {
	p *Plugin
	t tool.Tool
}

func (x *toolProxy) Spec() tool.Spec { return x.t.Spec() }

func (x *toolProxy) Invoke(ctx context.Context, call *tool.Call) (tool.Result, error) {
	r, err := x.t.Invoke(ctx, call)
	return r, x.p.wrap("tool "+x.t.Spec().Name+": invoke", err)
}

// SurfaceProxy is a surface served by a plugin.
type SurfaceProxy struct {
	p *Plugin
	r *surface.Remote
}

// Name returns the surface's name.
func (x *SurfaceProxy) Name() string { return x.r.Name() }

// Deliver sends one event to the surface.
func (x *SurfaceProxy) Deliver(ctx context.Context, ev surface.Event) error {
	return x.p.wrap("surface "+x.r.Name()+": deliver", x.r.Deliver(ctx, ev))
}

// Commands relays the surface's commands until ctx ends.
func (x *SurfaceProxy) Commands(ctx context.Context, send func(surface.Command) error) error {
	return x.p.wrap("surface "+x.r.Name()+": commands", x.r.Commands(ctx, send))
}

// Close ends the delivery stream.
func (x *SurfaceProxy) Close() (uint64, error) {
	n, err := x.r.Close()
	return n, x.p.wrap("surface "+x.r.Name()+": close", err)
}

var (
	_ sandbox.Sandbox   = (*sandboxProxy)(nil)
	_ provider.Provider = (*providerProxy)(nil)
	_ tool.Tool         = (*toolProxy)(nil)
	_ surface.Surface   = (*SurfaceProxy)(nil)
)
