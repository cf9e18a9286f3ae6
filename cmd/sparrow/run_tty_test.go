package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestApprovalOnTheTerminal answers the gate's question on a real
// terminal: "explain" first, then yes.
func TestApprovalOnTheTerminal(t *testing.T) {
	bin := buildSparrow(t)
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(filepath.Join(home, ".config", "sparrow"), 0o755)
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "greet.go"), []byte("Hello\n"), 0o644)
	conv := filepath.Join(home, "conv.json")
	os.WriteFile(conv, []byte(`{"turns":[
	  {"events":[{"tool_call":{"id":"c1","name":"edit_file","arguments":{"path":"greet.go","old_string":"Hello","new_string":"Ahoy"}}},{"stop":"tool_use"}]},
	  {"events":[{"text":"done"},{"stop":"end_turn"}]}]}`), 0o644)
	os.WriteFile(filepath.Join(home, ".config", "sparrow", "sparrow.hcl"),
		[]byte("model = \"replay\"\nprovider \"replay\" {\n  file = \""+conv+"\"\n}\nautonomy {\n  level = 0.2\n}\n"), 0o644)
	cmd := exec.Command(bin, "-C", ws, "run", "greet like a pirate")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + builtPlugins(t), "TERM=dumb"}
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer tty.Close()
	lines := make(chan string, 100)
	go func() {
		r := bufio.NewReader(tty)
		var cur strings.Builder
		for {
			b, err := r.ReadByte()
			if err != nil {
				close(lines)
				return
			}
			cur.WriteByte(b)
			if b == '\n' || strings.HasSuffix(cur.String(), "> ") {
				lines <- cur.String()
				cur.Reset()
			}
		}
	}()
	var seen strings.Builder
	expect := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !strings.Contains(seen.String(), want) {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("terminal closed before %q:\n%s", want, seen.String())
				}
				seen.WriteString(l)
			case <-deadline:
				t.Fatalf("never saw %q:\n%s", want, seen.String())
			}
		}
	}
	expect("? Allow edit_file greet.go  [mutating]")
	expect("[y]es  [n]o  [a]lways this run  [e]xplain > ")
	tty.Write([]byte("e\n"))
	expect("The gate asks because: supervised autonomy asks before mutating calls (autonomy 0.20 × mutating).")
	tty.Write([]byte("y\n"))
	expect("completed")
	cmd.Wait()
	if b, _ := os.ReadFile(filepath.Join(ws, "greet.go")); string(b) != "Ahoy\n" {
		t.Fatalf("greet.go = %q after approving", b)
	}
}
