package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/kernel/redact"
	"github.com/sparrow-cli/sparrow/sdk/plugin"
)

// RunOptions prepare one run.
type RunOptions struct {
	Task     string
	Approver engine.Approver
	// Subscribe attaches renderers and surfaces to the run's bus before
	// the first event.
	Subscribe func(b *bus.Bus)
	// NoModel prepares a run without a model, for Engine.CallTool: no
	// provider is started and no model need be configured.
	NoModel bool
}

// Run is a prepared run: call Engine.Run, then Close.
type Run struct {
	Engine *engine.Engine
	Bus    *bus.Bus
	// Dir is where the run is recorded.
	Dir string
	// Warnings are problems the run goes on without, such as a tool
	// plugin that would not start; the caller shows them.
	Warnings []string
	// Workspace is where the run works: the requested workspace, or the
	// sandbox's own (a git worktree).
	Workspace string
	// Notices are what the sandbox reported at teardown (where a
	// worktree's changes are and how to merge them); set by Close.
	Notices []string

	closeOnce sync.Once
	closers   []func()
}

// Close tears the sandbox session down, drains the bus and closes the
// recording. Safe to call twice.
func (r *Run) Close() {
	r.closeOnce.Do(func() {
		for i := len(r.closers) - 1; i >= 0; i-- {
			r.closers[i]()
		}
	})
}

// PrepareRun resolves the model chain, starts tools and the sandbox,
// opens the recording and wires bus, gate and engine.
func (k *Kernel) PrepareRun(ctx context.Context, o RunOptions) (*Run, error) {
	cfg := k.Config
	// Start every plugin the run needs at once; the sequential steps below
	// then wait only for the slowest start, not the sum.
	go func() { _ = k.Plugins.StartAll(ctx, k.runPlugins(!o.NoModel)...) }()
	began := time.Now()
	runID := recorder.NewRunID(time.Now())
	// The workspace is snapshotted meanwhile, as the run finds it; it
	// becomes the start checkpoint unless the sandbox moves the run.
	ahead := k.snapshotAhead(ctx, k.opts.Workspace)
	// The sandbox comes first: a backend may move the run's files (a git
	// worktree), and everything after works where they are.
	sbs, err := k.OpenSandbox(ctx, SandboxOptions{RunID: runID})
	if err != nil {
		return nil, err
	}
	r := &Run{Workspace: sbs.Workspace}
	r.closers = append(r.closers, func() {
		if n := sbs.Close(context.WithoutCancel(ctx)); n != "" {
			r.Notices = append(r.Notices, n)
		}
	})
	ws := sbs.Workspace
	k.Log.Debug("run: sandbox open", "backend", sbs.Backend, "after", time.Since(began))
	// Confined tool plugins work where the sandbox put the run's files.
	k.Plugins.SetWorkspace(ws)
	sb, sess := sbs.Sandbox, sbs.Session
	// The state the run starts from is recorded meanwhile: inputs.json
	// names it, so `replay --execute` can start where this run did.
	start := k.startCheckpoint(ctx, ws, runID, ahead)
	// So is the repository's HEAD (a git start), for inputs.json.
	head := make(chan string, 1)
	go func() { head <- repoHEAD(ws) }()
	var routes []engine.Route
	if !o.NoModel {
		if routes, err = k.Routes(ctx, cfg.Model); err != nil {
			r.Close()
			return nil, err
		}
	}
	k.Log.Debug("run: model routes ready", "after", time.Since(began))
	first := engine.Route{}
	if len(routes) > 0 {
		first = routes[0]
	}
	tools, toolErr := k.Tools(ctx)
	if toolErr != nil {
		k.Log.Warn("some tools are unavailable", "error", toolErr)
		if len(tools) == 0 {
			r.Close()
			return nil, toolErr
		}
		errs := []error{toolErr}
		if j, ok := toolErr.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, e := range errs {
			r.Warnings = append(r.Warnings, e.Error())
		}
	}
	k.Log.Debug("run: tools ready", "count", len(tools), "after", time.Since(began))
	// Every plugin is configured now, so every attribute a plugin's
	// schema marks sensitive is masked in the config recorded with the
	// run; it is shown while the start checkpoint finishes.
	shown := make(chan json.RawMessage, 1)
	go func() { shown <- k.configSnapshot() }()
	red := k.redactor()
	st := <-start
	k.Log.Debug("run: start checkpoint taken", "after", time.Since(began))
	if st.err != nil {
		r.Close()
		return nil, fmt.Errorf("checkpoint the starting state: %w", st.err)
	}
	rec, err := recorder.Create(cfg.Paths.StateDir, recorder.Inputs{
		RunID: runID, Task: red.String(o.Task), Workspace: ws, Model: first.Name, Provider: first.ProviderName,
		Sandbox: cfg.Sandbox, RepoHEAD: <-head, StartCheckpoint: st.cp.ID, StartCommit: st.cp.Commit,
		Seed:   first.Seed,
		Config: <-shown, SparrowVersion: Version, Started: time.Now(),
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("record run: %w", err)
	}
	r.Dir = filepath.Join(cfg.Paths.StateDir, "runs", runID)
	b := bus.New(runID, red, time.Now)
	b.SubscribeSync("recorder", rec.Write)
	if o.Subscribe != nil {
		o.Subscribe(b)
	}
	r.Bus = b
	r.closers = append(r.closers, func() { b.Close(); _ = rec.Close() })
	store := st.store
	r.closers = append(r.closers, func() { k.pruneCheckpoints(context.WithoutCancel(ctx), store) })
	policy := gate.PolicyFromConfig(cfg, ws)
	eng, err := engine.New(engine.Options{
		RunID: runID, Task: o.Task, Workspace: ws, Routes: routes, Tools: tools,
		Sandbox: sb, Session: sess, Bus: b, Gate: gate.New(policy),
		Tracker:  gate.NewTracker(cfg.Budget.MaxTurns, cfg.Budget.MaxUSD, int64(cfg.Budget.MaxTokens)),
		Approver: o.Approver, System: engine.SystemPrompt(ws), VerifyCommand: cfg.VerifyCommand, Redact: red.String,
		Checkpoints: runCheckpointer{store: store, runID: runID}, KeepFailedBatches: !cfg.Checkpoints.RollbackFailed,
		Info: engine.RunInfo{Provider: first.ProviderName, Sandbox: sbs.Backend, Mode: policy.Mode,
			Autonomy: cfg.Autonomy.Level, MaxTurns: cfg.Budget.MaxTurns, SparrowVersion: Version,
			SandboxProtections: sbs.Caps.Protections},
	})
	if err != nil {
		r.Close()
		return nil, err
	}
	r.Engine = eng
	k.Log.Debug("run: prepared", "after", time.Since(began))
	return r, nil
}

// redactor hides the values of sensitive config attributes and of
// credential-looking environment variables, everywhere in the stream.
func (k *Kernel) redactor() *redact.Redactor {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if name, val, ok := strings.Cut(kv, "="); ok {
			env[name] = val
		}
	}
	return redact.New(k.secrets(), env)
}

// configSnapshot is the merged config as recorded with a run: shown the
// way `config show` shows it, secrets masked.
func (k *Kernel) configSnapshot() json.RawMessage {
	var b strings.Builder
	if err := k.Config.Show(&b); err != nil {
		return nil
	}
	raw, _ := json.Marshal(b.String())
	return raw
}

// repoHEAD is the workspace's git HEAD, or "" outside git.
func repoHEAD(ws string) string {
	out, err := exec.Command("git", "-C", ws, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// runPlugins names the plugins a run will start: the first model's
// provider (when the run has a model), every tool plugin and the
// sandbox's plugin.
func (k *Kernel) runPlugins(model bool) []string {
	var names []string
	add := func(kind plugin.Kind, component string) {
		if b := componentBlocks(k.Config, kind)[component]; b != nil && b.Plugin != "" {
			names = append(names, b.Plugin)
		} else if m := k.discovered(kind, component); m != nil {
			names = append(names, m.Name)
		}
	}
	provider := k.Config.Provider
	if m := k.Config.Models[k.Config.Model]; m != nil && m.Provider != "" {
		provider = m.Provider
	}
	if provider == "" {
		provider = k.inferProvider(k.Config.Model)
	}
	if model {
		add(plugin.KindProvider, provider)
	}
	add(plugin.KindSandbox, k.Config.Sandbox)
	for _, m := range k.Discovered {
		if m.Kind == plugin.KindTool && k.unavailable[m.Name] == "" {
			names = append(names, m.Name)
		}
	}
	return names
}
