package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// TestRunAgainstAnOpenAICompatibleServer points `sparrow run --base-url`
// at a fake Chat Completions server on loopback speaking the real SSE wire
// format, tool-call deltas included: no config file, real plugins.
func TestRunAgainstAnOpenAICompatibleServer(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"tiny-coder","object":"model"}]}`)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		bodies = append(bodies, body)
		turn := len(bodies)
		mu.Unlock()
		w.Header().Set("content-type", "text/event-stream")
		chunk := func(delta string, finish string) {
			fin := "null"
			if finish != "" {
				fin = fmt.Sprintf("%q", finish)
			}
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, fin)
		}
		if turn == 1 {
			chunk(`{"role":"assistant","content":"Let me look."}`, "")
			chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}`, "")
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, "")
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"README\"}"}}]}`, "")
			chunk(`{}`, "tool_calls")
		} else {
			chunk(`{"role":"assistant","content":"It says ahoy."}`, "")
			chunk(`{}`, "stop")
		}
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":7}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	bin := buildSparrow(t)
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "README"), []byte("ahoy\n"), 0o644)
	// A seed in the model block reaches the vendor and the recording; an
	// API key that looks like nothing in particular is known secret only
	// because the plugin's schema marks api_key sensitive.
	const key = "plainkey-9f3a7c21e"
	os.MkdirAll(filepath.Join(home, ".config", "sparrow"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "sparrow", "sparrow.hcl"),
		[]byte("model \"tiny-coder\" {\n  seed = 42\n}\nprovider \"openai-compatible\" {\n  api_key = \""+key+"\"\n}\n"), 0o644)
	cmd := exec.Command(bin, "-C", ws, "run", "--json", "--base-url", srv.URL+"/v1", "--model", "tiny-coder", "what does the README say?")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SPARROW_PLUGIN_PATH=" + builtPlugins(t) + ":" + openaiPlugin(t)}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	events, err := event.Decode(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	fin := events[len(events)-1].Payload.(*event.RunFinished)
	if fin.Status != event.StatusCompleted || fin.Turns != 2 || fin.InputTokens != 100 {
		t.Fatalf("finished %+v", fin)
	}
	var sawRead bool
	for _, e := range events {
		if o, ok := e.Payload.(*event.ToolOutput); ok && o.Final && strings.Contains(o.Text, "ahoy") {
			sawRead = true
		}
	}
	if !sawRead {
		t.Error("read_file's result never showed up")
	}
	for i, b := range bodies {
		if b["seed"] != float64(42) {
			t.Errorf("request %d seed = %v, want 42", i+1, b["seed"])
		}
	}
	inputs, err := os.ReadFile(filepath.Join(home, ".local", "state", "sparrow", "runs", events[0].RunID, "inputs.json"))
	if err != nil || !strings.Contains(string(inputs), `"seed": 42`) {
		t.Errorf("inputs.json does not record the seed (%v):\n%s", err, inputs)
	}
	if len(auths) == 0 || auths[0] != "Bearer "+key {
		t.Errorf("the vendor got Authorization %q, want the configured key", auths)
	}
	recorded, _ := os.ReadFile(filepath.Join(home, ".local", "state", "sparrow", "runs", events[0].RunID, "events.jsonl"))
	for name, text := range map[string]string{"inputs.json": string(inputs), "events.jsonl": string(recorded), "stdout": stdout.String()} {
		if strings.Contains(text, key) {
			t.Errorf("%s holds the API key", name)
		}
	}
	// The second request carried the tool result back, OpenAI style.
	msgs, _ := json.Marshal(bodies[1]["messages"])
	if !strings.Contains(string(msgs), `"role":"tool"`) || !strings.Contains(string(msgs), `"tool_call_id":"call_1"`) || !strings.Contains(string(msgs), "ahoy") {
		t.Errorf("second request messages: %s", msgs)
	}
}

var openaiOnce sync.Once
var openaiDir string

// openaiPlugin builds the openai provider plugin once.
func openaiPlugin(t testing.TB) string {
	t.Helper()
	openaiOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sparrow-test-openai-")
		if err == nil {
			err = buildPlugin(dir, "openai", "providers/openai", "sparrow-provider-openai")
		}
		if err != nil {
			t.Fatalf("build openai plugin: %v", err)
		}
		openaiDir = dir
	})
	return openaiDir
}
