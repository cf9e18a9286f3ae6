package recorder_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

var t0 = time.Date(2026, 11, 22, 15, 30, 12, 0, time.UTC)

// compactJSON compares raw JSON by content, not layout.
var compactJSON = cmp.Transformer("compactJSON", func(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return "invalid: " + string(r)
	}
	return b.String()
})

func inputs(id string, started time.Time) recorder.Inputs {
	return recorder.Inputs{
		RunID: id, Task: "fix the flaky test", Workspace: "/src/app", Model: "claude-x", Provider: "anthropic",
		Sandbox: "local", RepoHEAD: "3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291",
		Config: json.RawMessage(`{"model":"claude-x","budget":{"max_usd":2}}`), SparrowVersion: "0.1.0", Started: started,
	}
}

func events(runID string, n int) []event.Event {
	var out []event.Event
	for i := 1; i <= n; i++ {
		var p event.Payload = &event.Message{Role: "assistant", Text: strings.Repeat("x", i)}
		if i == n {
			p = &event.RunFinished{Status: event.StatusCompleted, Turns: 2}
		}
		out = append(out, event.Event{SchemaVersion: event.SchemaVersion, RunID: runID, AgentID: "main", Seq: uint64(i),
			Time: t0.Add(time.Duration(i) * time.Second), Type: p.EventType(), Payload: p})
	}
	return out
}

// record creates run id under dir and writes evs.
func record(t *testing.T, dir, id string, evs []event.Event) *recorder.Recorder {
	t.Helper()
	r, err := recorder.Create(dir, inputs(id, t0))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := r.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestWriteThenOpen(t *testing.T) {
	dir := t.TempDir()
	const id = "20261122-153012-a1b2c3"
	evs := events(id, 5)
	r := record(t, dir, id, evs)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := recorder.Open(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	want := &recorder.Run{Dir: filepath.Join(dir, "runs", id), Inputs: inputs(id, t0), Events: evs}
	if diff := cmp.Diff(want, run, compactJSON, noPrev); diff != "" {
		t.Errorf("Open (-want +got):\n%s", diff)
	}
	for path, perm := range map[string]os.FileMode{
		filepath.Join(dir, "runs"): 0o700,
		run.Dir:                    0o700,
		filepath.Join(run.Dir, recorder.InputsFile): 0o600,
		filepath.Join(run.Dir, recorder.EventsFile): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != perm {
			t.Errorf("%s: mode %v, want %v", path, got, perm)
		}
	}
}

func TestEventsAreOnDiskAtOnce(t *testing.T) {
	dir := t.TempDir()
	const id = "r1"
	r := record(t, dir, id, events(id, 2)[:1])
	defer r.Close()
	// Not closed: a crash now must not lose the event.
	b, err := os.ReadFile(filepath.Join(r.Dir(), recorder.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 1 || !bytes.HasSuffix(b, []byte("\n")) {
		t.Errorf("events.jsonl holds %d complete lines before Close, want 1:\n%s", n, b)
	}
}

func TestTruncatedLastLine(t *testing.T) {
	dir := t.TempDir()
	const id = "r1"
	evs := events(id, 4)
	r := record(t, dir, id, evs)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.Dir(), recorder.EventsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-15); err != nil { // mid last line
		t.Fatal(err)
	}
	run, err := recorder.Open(dir, id)
	if err != nil {
		t.Fatalf("Open of a truncated recording: %v", err)
	}
	if !run.Truncated {
		t.Error("Truncated = false")
	}
	if diff := cmp.Diff(evs[:3], run.Events, noPrev); diff != "" {
		t.Errorf("events before the torn line (-want +got):\n%s", diff)
	}
}

func TestMalformedMiddleLine(t *testing.T) {
	dir := t.TempDir()
	const id = "r1"
	evs := events(id, 4)
	r := record(t, dir, id, evs)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.Dir(), recorder.EventsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[2] = []byte("{not json\n")
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	run, err := recorder.Open(dir, id)
	if err == nil || !strings.Contains(err.Error(), "events.jsonl:3:") {
		t.Fatalf("Open error = %v, want one naming events.jsonl:3", err)
	}
	if run == nil || len(run.Events) != 2 || run.Truncated {
		t.Errorf("Run with the error = %+v, want the 2 events before line 3", run)
	}
}

func TestCreateFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"", "../escape", "a/b", ".hidden", "x y"} {
		if _, err := recorder.Create(dir, inputs(id, t0)); err == nil {
			t.Errorf("Create with run id %q succeeded", id)
		}
	}
	bad := inputs("bad-config", t0)
	bad.Config = json.RawMessage(`{broken`)
	if _, err := recorder.Create(dir, bad); err == nil {
		t.Fatal("Create with invalid config JSON succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "bad-config")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Create left its directory behind: %v", err)
	}
	r := record(t, dir, "once", nil)
	defer r.Close()
	if _, err := recorder.Create(dir, inputs("once", t0)); err == nil {
		t.Error("Create over an existing run succeeded")
	}
}

func TestUpdateInputsIsAtomic(t *testing.T) {
	dir := t.TempDir()
	const id = "r1"
	r := record(t, dir, id, nil)
	defer r.Close()
	in := inputs(id, t0)
	in.RepoHEAD = "0000000000000000000000000000000000000001"
	if err := r.UpdateInputs(in); err != nil {
		t.Fatal(err)
	}
	run, err := recorder.Open(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, run.Inputs, compactJSON); diff != "" {
		t.Errorf("inputs after update (-want +got):\n%s", diff)
	}
	if err := r.UpdateInputs(inputs("other", t0)); err == nil {
		t.Error("UpdateInputs changed the run id")
	}

	// Make the rename fail: inputs.json becomes a non-empty directory.
	path := filepath.Join(r.Dir(), recorder.InputsFile)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateInputs(in); err == nil {
		t.Fatal("UpdateInputs over a directory succeeded")
	}
	assertNoTempFiles(t, r.Dir())

	if os.Geteuid() != 0 { // root ignores directory permissions
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := r.UpdateInputs(in); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		if err := os.Chmod(r.Dir(), 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(r.Dir(), 0o700) })
		in.Task = "changed"
		if err := r.UpdateInputs(in); err == nil {
			t.Error("UpdateInputs in a read-only directory succeeded")
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Error("a failed UpdateInputs changed inputs.json")
		}
		assertNoTempFiles(t, r.Dir())
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteAfterClose(t *testing.T) {
	dir := t.TempDir()
	evs := events("r1", 2)
	r := record(t, dir, "r1", evs[:1])
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := r.Write(evs[1]); !errors.Is(err, recorder.ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := r.UpdateInputs(inputs("r1", t0)); !errors.Is(err, recorder.ErrClosed) {
		t.Errorf("UpdateInputs after Close: %v, want ErrClosed", err)
	}
}

func TestWriteRefusesBadEventWithoutDamage(t *testing.T) {
	dir := t.TempDir()
	evs := events("r1", 2)
	r := record(t, dir, "r1", evs[:1])
	if err := r.Write(event.Event{Seq: 99, Type: event.TypeMessage}); err == nil {
		t.Error("Write of an event without payload succeeded")
	}
	if err := r.Write(evs[1]); err != nil {
		t.Fatalf("Write after a refused event: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := recorder.Open(dir, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, run.Events, noPrev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	if got, err := recorder.List(dir); err != nil || got != nil {
		t.Fatalf("List of an empty state dir = %v, %v", got, err)
	}
	for i, id := range []string{"b-middle", "c-oldest", "a-newest", "d-tie-low", "e-tie-high"} {
		started := []time.Time{t0, t0.Add(-time.Hour), t0.Add(time.Hour), t0.Add(-2 * time.Hour), t0.Add(-2 * time.Hour)}[i]
		r, err := recorder.Create(dir, inputs(id, started))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs", "stray"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs", "broken"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runs", "broken", recorder.InputsFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := recorder.List(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("broken", recorder.InputsFile)) {
		t.Errorf("List error = %v, want one naming broken/inputs.json", err)
	}
	var ids []string
	for _, in := range got {
		ids = append(ids, in.RunID)
	}
	if diff := cmp.Diff([]string{"a-newest", "b-middle", "c-oldest", "e-tie-high", "d-tie-low"}, ids); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
}

func TestNewRunID(t *testing.T) {
	re := regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{6}$`)
	local := time.FixedZone("UTC+9", 9*3600)
	a := recorder.NewRunID(time.Date(2026, 11, 22, 15, 30, 12, 0, time.UTC))
	b := recorder.NewRunID(time.Date(2026, 11, 22, 15, 30, 13, 0, time.UTC))
	c := recorder.NewRunID(time.Date(2026, 11, 23, 1, 0, 0, 0, local)) // 2026-11-22 16:00 UTC
	for _, id := range []string{a, b, c} {
		if !re.MatchString(id) {
			t.Errorf("run id %q does not match %s", id, re)
		}
	}
	if !strings.HasPrefix(a, "20261122-153012-") {
		t.Errorf("run id %q, want prefix 20261122-153012-", a)
	}
	ids := []string{c, b, a}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{a, b, c}, ids); diff != "" {
		t.Errorf("run ids do not sort by time (-want +got):\n%s", diff)
	}
	if x, y := recorder.NewRunID(t0), recorder.NewRunID(t0); x == y {
		t.Errorf("two run ids in the same second are equal: %s", x)
	}
}

// noPrev ignores the hash chain, which verify_test.go checks.
var noPrev = cmpopts.IgnoreFields(event.Event{}, "Prev")
