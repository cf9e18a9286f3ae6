package recorder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

func recorded(t *testing.T) (string, string) {
	t.Helper()
	state := t.TempDir()
	rec, err := Create(state, Inputs{RunID: "r-1", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	payloads := []event.Payload{&event.RunStarted{Task: "t"}, &event.Message{Role: "assistant", Text: "hi"},
		&event.Message{Role: "assistant", Text: "again"}, &event.RunFinished{Status: "completed"}}
	for i, p := range payloads {
		if err := rec.Write(event.Event{SchemaVersion: 1, RunID: "r-1", AgentID: "main", Seq: uint64(i + 1), Time: time.Unix(int64(i), 0), Type: p.EventType(), Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	rec.Close()
	return state, filepath.Join(state, RunsDir, "r-1", EventsFile)
}

func TestVerify(t *testing.T) {
	edit := func(f func(lines []string) []string) func(string) {
		return func(path string) {
			b, _ := os.ReadFile(path)
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			os.WriteFile(path, []byte(strings.Join(f(lines), "\n")+"\n"), 0o600)
		}
	}
	cases := []struct {
		name    string
		tamper  func(path string)
		badLine int
		problem string
	}{
		{"intact", func(string) {}, 0, ""},
		{"altered", edit(func(l []string) []string { l[1] = strings.Replace(l[1], "hi", "HI", 1); return l }), 3, "does not follow"},
		{"removed", edit(func(l []string) []string { return append(l[:1], l[2:]...) }), 2, "does not follow"},
		{"inserted", edit(func(l []string) []string { return append(l[:2], append([]string{l[1]}, l[2:]...)...) }), 3, "does not follow"},
		{"first removed", edit(func(l []string) []string { return l[1:] }), 1, "does not follow"},
		{"last removed", edit(func(l []string) []string { return l[:len(l)-1] }), 0, "does not end with RunFinished"},
		{"garbage", edit(func(l []string) []string { l[2] = "{nope"; return l }), 3, "is not an event"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			state, path := recorded(t)
			tc.tamper(path)
			v, err := Verify(state, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			if v.BadLine != tc.badLine || !strings.Contains(v.Problem, tc.problem) || (tc.problem == "") != v.OK() {
				t.Errorf("%+v, want line %d %q", v, tc.badLine, tc.problem)
			}
		})
	}
	// Reading the recording still works: prev is part of the event.
	state, _ := recorded(t)
	run, err := Open(state, "r-1")
	if err != nil || len(run.Events) != 4 || run.Events[0].Prev != "" || !strings.HasPrefix(run.Events[1].Prev, "sha256:") {
		t.Fatalf("open: %v %+v", err, run)
	}
}
