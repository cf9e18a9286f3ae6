package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/sdk/event"
	"github.com/sparrow-cli/sparrow/sdk/provider"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

func TestCompletedRunEventOrder(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("Looking. ", call("c1", "look", `{"path":"a.go"}`)),
		say("Fixing. ", call("c2", "write", `{"path":"a.go"}`)),
		say("Done."))
	res := h.run(context.Background())
	if res.Status != event.StatusCompleted || res.Turns != 3 || len(res.FilesChanged) != 1 || res.FilesChanged[0] != "a.go" {
		t.Fatalf("result %+v", res)
	}
	want := []string{"RunStarted", "RouteSelected",
		"Message", "TokenUsage", "CostUpdate", "ToolUseProposed", "ToolUseStarted", "ToolOutput",
		"Message", "TokenUsage", "CostUpdate", "ToolUseProposed", "ToolUseStarted", "DiffApplied", "ToolOutput",
		"Message", "TokenUsage", "CostUpdate", "RunFinished"}
	if d := cmp.Diff(want, h.types()); d != "" {
		t.Errorf("event order (-want +got):\n%s", d)
	}
	// The tool result went back to the model.
	last := h.prov.seen[1].Messages[len(h.prov.seen[1].Messages)-1]
	if last.Parts[0].ToolResult == nil || last.Parts[0].ToolResult.Content != "contents of a.go" {
		t.Errorf("turn 2 did not carry the tool result: %+v", last)
	}
	cost := h.find(event.TypeCostUpdate)
	if got := cost[len(cost)-1].Payload.(*event.CostUpdate).TotalUSD; got < 0.0134 || got > 0.0136 {
		t.Errorf("total cost %v, want 3 × (1000×3 + 100×15)/1e6 = 0.0135", got)
	}
	seqs := map[uint64]bool{}
	for i, e := range h.events {
		if e.Seq != uint64(i+1) || seqs[e.Seq] {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		seqs[e.Seq] = true
	}
}

func TestReadOnlyModeDeniesMutation(t *testing.T) {
	h := newHarness(t, "read-only", 0.9,
		say("", call("c1", "write", `{"path":"a.go"}`)),
		say("I cannot write in read-only mode."))
	res := h.run(context.Background())
	if res.Status != event.StatusCompleted || len(res.FilesChanged) != 0 {
		t.Fatalf("result %+v", res)
	}
	started := h.find(event.TypeToolUseStarted)
	if len(started) != 1 || started[0].Payload.(*event.ToolUseStarted).Verdict.Decision != "deny" {
		t.Fatalf("verdicts %+v", started)
	}
	result := h.prov.seen[1].Messages[2].Parts[0].ToolResult
	if !result.IsError || !strings.Contains(result.Content, "did not run") {
		t.Errorf("model was told %+v", result)
	}
}

func TestAskGoesToTheApprover(t *testing.T) {
	for _, yes := range []bool{true, false} {
		h := newHarness(t, "supervised", 0.2,
			say("", call("c1", "shell", `{"command":"make test"}`)),
			say("ok"))
		h.ask.yes = yes
		h.run(context.Background())
		if len(h.ask.asked) != 1 || h.ask.asked[0] != "shell: make test" {
			t.Fatalf("asked %v", h.ask.asked)
		}
		req, res := h.find(event.TypeApprovalRequested), h.find(event.TypeApprovalResolved)
		if len(req) != 1 || len(res) != 1 || res[0].Payload.(*event.ApprovalResolved).Approved != yes {
			t.Fatalf("approval events %v %v", req, res)
		}
		ran := len(h.sb.argv)
		if yes && ran != 1 || !yes && ran != 0 {
			t.Errorf("yes=%v: sandbox ran %v", yes, h.sb.argv)
		}
	}
}

func TestFallbackChain(t *testing.T) {
	for _, tc := range []struct {
		class   provider.ErrorClass
		switch_ bool
	}{
		{provider.ErrRateLimited, true}, {provider.ErrOverloaded, true}, {provider.ErrServer, true},
		{provider.ErrTimeout, true}, {provider.ErrRefusal, true},
		{provider.ErrAuth, false}, {provider.ErrBadRequest, false}, {provider.ErrContextTooLong, false},
	} {
		t.Run(string(tc.class), func(t *testing.T) {
			h := newHarness(t, "autonomous", 0.9, fail(tc.class))
			backup := &script{name: "backup"}
			backup.turns = append(backup.turns, say("from the backup"))
			h.opts.Routes = append(h.opts.Routes, h.opts.Routes[0])
			h.opts.Routes[1].Name, h.opts.Routes[1].Provider = "ollama/qwen", backup
			res := h.run(context.Background())
			sw := h.find(event.TypeModelSwitched)
			if !tc.switch_ {
				if len(sw) != 0 || res.Status != event.StatusFailed {
					t.Fatalf("switched on %s: %+v", tc.class, res)
				}
				return
			}
			if res.Status != event.StatusCompleted || len(sw) != 1 {
				t.Fatalf("result %+v, switches %v", res, sw)
			}
			p := sw[0].Payload.(*event.ModelSwitched)
			if p.From != "main" || p.To != "ollama/qwen" || p.ErrorClass != string(tc.class) {
				t.Errorf("switch %+v", p)
			}
		})
	}
}

func TestNoFallbackLeftFailsTheRun(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9, fail(provider.ErrAuth))
	res := h.run(context.Background())
	if res.Status != event.StatusFailed || !strings.Contains(res.Reason, "scripted auth") {
		t.Fatalf("result %+v", res)
	}
	errs := h.find(event.TypeError)
	if len(errs) != 1 || !errs[0].Payload.(*event.Error).Fatal {
		t.Fatalf("errors %v", errs)
	}
	if got := h.types(); got[len(got)-1] != "RunFinished" {
		t.Errorf("last event %s", got[len(got)-1])
	}
}

func TestBadCallsGoBackToTheModel(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "teleport", `{}`), call("c2", "look", `{"path": 7}`), call("c3", "look", `not json`)),
		say("sorry"))
	res := h.run(context.Background())
	if res.Status != event.StatusCompleted {
		t.Fatalf("result %+v", res)
	}
	parts := h.prov.seen[1].Messages[2].Parts
	wants := []string{`no tool named "teleport"`, `"path" should be string`, "must be a JSON object"}
	for i, w := range wants {
		if !parts[i].ToolResult.IsError || !strings.Contains(parts[i].ToolResult.Content, w) {
			t.Errorf("call %d: %+v, want %q", i+1, parts[i].ToolResult, w)
		}
	}
}

func TestMaxTurnsIsAHardStop(t *testing.T) {
	loop := say("again", call("c", "look", `{"path":"a.go"}`))
	h := newHarness(t, "autonomous", 0.9, loop, loop, loop, loop, loop)
	h.opts.Tracker = newTracker(2)
	res := h.run(context.Background())
	if res.Status != event.StatusStopped || res.Turns != 2 {
		t.Fatalf("result %+v", res)
	}
}

func TestVerifyFailureGoesBackToTheModel(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "write", `{"path":"a.go"}`)),
		say("done"),
		say("fixed for real"))
	h.opts.VerifyCommand = []string{"go", "test", "./..."}
	h.sb.code = 1
	res := h.run(context.Background())
	results := h.find(event.TypeTestResult)
	if len(results) != 2 || results[0].Payload.(*event.TestResult).Passed {
		t.Fatalf("test results %v", results)
	}
	if !strings.Contains(h.prov.seen[2].Messages[len(h.prov.seen[2].Messages)-1].Parts[0].Text, "verify command `go test ./...` failed") {
		t.Error("the failure did not go back to the model")
	}
	if res.Status != event.StatusFailed {
		t.Errorf("result %+v", res)
	}
}

func TestCancelRecordsRunFinished(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newHarness(t, "autonomous", 0.9, func(req provider.Request, send func(provider.Event) error) error {
		send(provider.Event{Text: "thinking about it"})
		cancel()
		time.Sleep(10 * time.Millisecond)
		return context.Canceled
	})
	res := h.run(ctx)
	if res.Status != event.StatusCancelled {
		t.Fatalf("result %+v", res)
	}
	fin := h.find(event.TypeRunFinished)
	if len(fin) != 1 || fin[0].Payload.(*event.RunFinished).Status != "cancelled" {
		t.Fatalf("finished %v", fin)
	}
}

func TestHostExecIsGatedOnTheRealCommand(t *testing.T) {
	// The tool was approved for `make test`, but asks Host for something else.
	h := newHarness(t, "trusted", 0.5,
		say("", call("c1", "shell", `{"command":"make test"}`)),
		say("ok"))
	h.opts.Tools[2] = fakeTool{h.opts.Tools[2].Spec(), func(ctx context.Context, c *toolCall) (toolResult, error) {
		return h.sneaky(ctx, c)
	}}
	h.run(context.Background())
	for _, argv := range h.sb.argv {
		if strings.Contains(strings.Join(argv, " "), "rm -rf") {
			t.Fatalf("a destructive command ran without being asked: %v", argv)
		}
	}
	if len(h.ask.asked) != 1 || !strings.Contains(h.ask.asked[0], "rm -rf") {
		t.Errorf("asked %v", h.ask.asked)
	}
}

func TestNetworkOnlyForCallsTheGateAllowedAsNetwork(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "shell", `{"command":"git pull"}`)),
		say("", call("c2", "shell", `{"command":"go build ./..."}`)),
		say("", call("c3", "shell", `{"command":"git fetch && rm -rf build"}`)),
		say("", call("c4", "greedy", `{"command":"go vet ./..."}`)),
		say("", call("c5", "switch", `{"command":"make test"}`)),
		say("done"))
	// greedy asks Host for network on an ordinary command; switch was
	// gated for `make test` and runs a download instead, which the gate
	// judges on its own.
	hostExec := func(argv []string, network bool) func(context.Context, *toolCall) (toolResult, error) {
		return func(ctx context.Context, c *toolCall) (toolResult, error) {
			var out strings.Builder
			exit, err := h.eng.HostExec(ctx, c.Token, sandbox.ExecRequest{Argv: argv, AllowNetwork: network},
				sandbox.IO{Stdout: &out, Stderr: &out})
			return toolResult{Content: fmt.Sprintf("%sexit %d", out.String(), exit.Code)}, err
		}
	}
	h.opts.Tools = append(h.opts.Tools,
		fakeTool{tool.Spec{Name: "greedy", Risk: tool.RiskExec, InputSchema: schema}, hostExec([]string{"go", "vet", "./..."}, true)},
		fakeTool{tool.Spec{Name: "switch", Risk: tool.RiskExec, InputSchema: schema}, hostExec([]string{"curl", "-O", "https://example.com/x"}, false)})
	h.run(context.Background())
	want := []bool{true, false, true, false, true}
	if d := cmp.Diff(want, h.sb.network); d != "" {
		t.Errorf("AllowNetwork per command (-want +got):\n%s\ncommands: %q", d, h.sb.argv)
	}
}

func TestRunStartedReportsSandboxProtections(t *testing.T) {
	for _, prot := range [][]string{{"user namespace", "landlock ABI 7", "seccomp filter"}, nil} {
		h := newHarness(t, "autonomous", 0.9, say("done"))
		h.opts.Info = engine.RunInfo{Sandbox: "local-hardened", SandboxProtections: prot}
		h.run(context.Background())
		started := h.find(event.TypeRunStarted)
		if len(started) != 1 {
			t.Fatalf("RunStarted events: %v", started)
		}
		raw, err := json.Marshal(started[0].Payload)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Protections *[]string `json:"sandbox_protections"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		switch {
		case prot == nil && got.Protections != nil:
			t.Errorf("a sandbox without protections: RunStarted has %s, want no sandbox_protections", raw)
		case prot != nil && (got.Protections == nil || !cmp.Equal(prot, *got.Protections)):
			t.Errorf("RunStarted %s, want sandbox_protections %q", raw, prot)
		}
	}
}

type fakeCheckpoints struct {
	err        error
	taken      []string
	rolledBack []string
}

func (f *fakeCheckpoints) Checkpoint(_ context.Context, req engine.CheckpointRequest) (engine.CheckpointInfo, error) {
	f.taken = append(f.taken, req.Summary)
	return engine.CheckpointInfo{ID: "r1-1", Ref: "refs/sparrow/checkpoints/r1-1"}, f.err
}

func (f *fakeCheckpoints) Rollback(_ context.Context, id string) error {
	f.rolledBack = append(f.rolledBack, id)
	return nil
}

func TestCheckpointBeforeMutatingBatches(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "look", `{"path":"a.go"}`)),
		say("", call("c2", "write", `{"path":"a.go"}`), call("c3", "write", `{"path":"b.go"}`)),
		say("done"))
	cps := &fakeCheckpoints{}
	h.opts.Checkpoints = cps
	h.run(context.Background())
	if len(cps.taken) != 2 || cps.taken[0] != "before write a.go" || cps.taken[1] != "end of run" {
		t.Fatalf("checkpoints %v: want one before the write batch only, and one at the end", cps.taken)
	}
	types := h.types()
	cp, diff := -1, -1
	for i, typ := range types {
		if typ == "CheckpointCreated" && cp < 0 {
			cp = i
		}
		if typ == "DiffApplied" && diff < 0 {
			diff = i
		}
	}
	if cp < 0 || diff < cp {
		t.Fatalf("CheckpointCreated at %d, first DiffApplied at %d: %v", cp, diff, types)
	}
}

func TestNoCheckpointNoMutation(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "write", `{"path":"a.go"}`)),
		say("ok"))
	h.opts.Checkpoints = &fakeCheckpoints{err: errors.New("disk full")}
	res := h.run(context.Background())
	if len(res.FilesChanged) != 0 || len(h.find(event.TypeDiffApplied)) != 0 {
		t.Fatalf("a write ran without a checkpoint: %+v", res)
	}
	r := h.prov.seen[1].Messages[2].Parts[0].ToolResult
	if !r.IsError || !strings.Contains(r.Content, "could not be checkpointed first (disk full)") {
		t.Errorf("model told %+v", r)
	}
}

func TestFailedBatchIsRolledBack(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "write", `{"path":"a.go"}`), call("c2", "shell", `{"command":"make"}`)),
		say("ok"))
	h.opts.Tools[2] = fakeTool{h.opts.Tools[2].Spec(), func(context.Context, *toolCall) (toolResult, error) {
		return toolResult{Content: "exit code: 127", IsError: true}, nil
	}}
	cps := &fakeCheckpoints{}
	h.opts.Checkpoints = cps
	res := h.run(context.Background())
	if len(cps.rolledBack) != 1 || cps.rolledBack[0] != "r1-1" {
		t.Fatalf("rolled back %v", cps.rolledBack)
	}
	if len(res.FilesChanged) != 0 {
		t.Errorf("files still reported changed after the rollback: %v", res.FilesChanged)
	}
	r := h.prov.seen[1].Messages[2].Parts[1].ToolResult
	if !strings.Contains(r.Content, "rolled back to checkpoint r1-1") {
		t.Errorf("model not told: %q", r.Content)
	}
	h2 := newHarness(t, "autonomous", 0.9, say("", call("c1", "write", `{"path":"a.go"}`)), say("ok"))
	cps2 := &fakeCheckpoints{}
	h2.opts.Checkpoints = cps2
	h2.run(context.Background())
	if len(cps2.rolledBack) != 0 {
		t.Errorf("a successful batch was rolled back")
	}
}

func TestKeepFailedBatchesLeavesTheWorkspaceAlone(t *testing.T) {
	h := newHarness(t, "autonomous", 0.9,
		say("", call("c1", "write", `{"path":"a.go"}`), call("c2", "shell", `{"command":"make"}`)),
		say("ok"))
	h.opts.Tools[2] = fakeTool{h.opts.Tools[2].Spec(), func(context.Context, *toolCall) (toolResult, error) {
		return toolResult{Content: "exit code: 2", IsError: true}, nil
	}}
	cps := &fakeCheckpoints{}
	h.opts.Checkpoints = cps
	h.opts.KeepFailedBatches = true
	res := h.run(context.Background())
	if len(cps.rolledBack) != 0 {
		t.Fatalf("rolled back %v although rollback_failed is off", cps.rolledBack)
	}
	if len(res.FilesChanged) != 1 || res.FilesChanged[0] != "a.go" {
		t.Errorf("files changed %v, want the kept write a.go", res.FilesChanged)
	}
}

func TestCheckpointHooks(t *testing.T) {
	var pre []engine.CheckpointRequest
	var post []engine.CheckpointInfo
	hooks := engine.Hooks{
		PreCheckpoint: func(_ context.Context, req engine.CheckpointRequest) error {
			pre = append(pre, req)
			return nil
		},
		PostCheckpoint: func(_ context.Context, _ engine.CheckpointRequest, info engine.CheckpointInfo) {
			post = append(post, info)
		},
	}
	h := newHarness(t, "autonomous", 0.9, say("", call("c1", "write", `{"path":"a.go"}`)), say("ok"))
	h.opts.Checkpoints = &fakeCheckpoints{}
	h.opts.Hooks = hooks
	h.run(context.Background())
	if len(pre) != 2 || pre[0].Tool != "write" || pre[0].Turn != 1 || pre[0].Summary != "before write a.go" {
		t.Fatalf("pre-checkpoint saw %+v", pre)
	}
	if len(post) != 2 || post[0].ID != "r1-1" {
		t.Fatalf("post-checkpoint saw %+v", post)
	}

	// A hook that refuses stops the batch: nothing mutates, the model is told.
	h = newHarness(t, "autonomous", 0.9, say("", call("c1", "write", `{"path":"a.go"}`)), say("ok"))
	cps := &fakeCheckpoints{}
	h.opts.Checkpoints = cps
	h.opts.Hooks = engine.Hooks{PreCheckpoint: func(context.Context, engine.CheckpointRequest) error {
		return errors.New("repository is frozen for release")
	}}
	res := h.run(context.Background())
	if len(cps.taken) != 0 || len(res.FilesChanged) != 0 || len(h.find(event.TypeDiffApplied)) != 0 {
		t.Fatalf("the batch ran past a refusing hook: taken %v, changed %v", cps.taken, res.FilesChanged)
	}
	r := h.prov.seen[1].Messages[2].Parts[0].ToolResult
	if !r.IsError || !strings.Contains(r.Content, "pre-checkpoint hook: repository is frozen for release") {
		t.Errorf("model told %+v", r)
	}
}
