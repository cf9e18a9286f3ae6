package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/kernel/recorder"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// TestCtrlCCancelsARun interrupts a run mid-stream: sparrow exits 130, the
// recording ends with RunFinished (cancelled), and no plugin survives.
func TestCtrlCCancelsARun(t *testing.T) {
	bin := buildSparrow(t)
	plugins := builtPlugins(t)
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(filepath.Join(home, ".config", "sparrow"), 0o755)
	os.MkdirAll(ws, 0o755)
	conv := filepath.Join(home, "conv.json")
	os.WriteFile(conv, []byte(`{"turns":[{"events":[{"text":"one "},{"text":"two "},{"text":"three "},{"text":"four"},{"stop":"end_turn"}]}]}`), 0o644)
	os.WriteFile(filepath.Join(home, ".config", "sparrow", "sparrow.hcl"),
		[]byte("model = \"replay\"\nprovider \"replay\" {\n  file = \""+conv+"\"\n  delay = \"2s\"\n}\n"), 0o644)
	cmd := exec.Command(bin, "-C", ws, "run", "--json", "count slowly")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + plugins}
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), `"type":"RouteSelected"`) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("run never started:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tree := descendants(cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	runs, err := recorder.List(filepath.Join(home, ".local", "state", "sparrow"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	run, err := recorder.Open(filepath.Join(home, ".local", "state", "sparrow"), runs[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	last := run.Events[len(run.Events)-1]
	if fin, ok := last.Payload.(*event.RunFinished); !ok || fin.Status != event.StatusCancelled {
		t.Fatalf("last recorded event %s %+v", last.Type, last.Payload)
	}
	time.Sleep(200 * time.Millisecond)
	for _, p := range tree {
		if isAlive(p) {
			t.Errorf("%v outlived the cancelled run", p)
		}
	}
}

// lockedBuffer is a bytes.Buffer the test may read while the process
// still writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
