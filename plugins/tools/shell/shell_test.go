package shell

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// host runs what the tool asks, as the kernel's Host would, and records it.
type host struct {
	argv  [][]string
	exit  *sandbox.Exit
	write string
}

func (h *host) Exec(ctx context.Context, r sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	h.argv = append(h.argv, r.Argv)
	if h.exit != nil {
		io.Stdout.Write([]byte(h.write))
		return *h.exit, nil
	}
	c := exec.CommandContext(ctx, r.Argv[0], r.Argv[1:]...)
	c.Stdout, c.Stderr = io.Stdout, io.Stderr
	err := c.Run()
	code := c.ProcessState.ExitCode()
	if err != nil && code < 0 {
		return sandbox.Exit{}, err
	}
	return sandbox.Exit{Code: code}, nil
}

func run(t *testing.T, h *host, args string) (tool.Result, string) {
	t.Helper()
	var streamed strings.Builder
	res, err := Tool{}.Invoke(context.Background(), &tool.Call{Arguments: json.RawMessage(args), Output: &streamed, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	return res, streamed.String()
}

func TestRunsThroughHost(t *testing.T) {
	h := &host{}
	res, streamed := run(t, h, `{"command":"echo out; echo err >&2; exit 3"}`)
	if len(h.argv) != 1 || strings.Join(h.argv[0], "|") != "/bin/sh|-c|echo out; echo err >&2; exit 3" {
		t.Fatalf("host saw %v", h.argv)
	}
	if res.IsError || !strings.Contains(res.Content, "out\n") || !strings.Contains(res.Content, "err\n") || !strings.HasSuffix(res.Content, "exit code: 3") {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(streamed, "out") {
		t.Errorf("nothing streamed: %q", streamed)
	}
}

func TestFailuresTheModelMustSee(t *testing.T) {
	cases := []struct {
		exit  sandbox.Exit
		isErr bool
		want  string
	}{
		{sandbox.Exit{Code: 124, TimedOut: true}, true, "timed out after 2m0s"},
		{sandbox.Exit{Code: 127}, true, "exit code: 127"},
		{sandbox.Exit{Code: 126}, true, "exit code: 126"},
		{sandbox.Exit{Code: 137, Signal: "KILL"}, false, "killed by signal KILL"},
		{sandbox.Exit{Code: 1}, false, "exit code: 1"},
	}
	for _, tc := range cases {
		exit := tc.exit
		res, _ := run(t, &host{exit: &exit}, `{"command":"x"}`)
		if res.IsError != tc.isErr || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%+v: %+v", tc.exit, res)
		}
	}
	for _, args := range []string{`{"command":"  "}`, `{"cmd":"ls"}`, `{}`} {
		h := &host{}
		if res, _ := run(t, h, args); !res.IsError || len(h.argv) != 0 {
			t.Errorf("%s: ran %v, result %+v", args, h.argv, res)
		}
	}
}

func TestHeadAndTailAreKept(t *testing.T) {
	big := strings.Repeat("a", headBytes) + strings.Repeat("m", 50000) + strings.Repeat("z", tailBytes)
	exit := sandbox.Exit{Duration: time.Second}
	res, _ := run(t, &host{exit: &exit, write: big}, `{"command":"x"}`)
	if !strings.HasPrefix(res.Content, strings.Repeat("a", headBytes)+"\n[… 50000 bytes omitted …]\n"+strings.Repeat("z", tailBytes)) {
		t.Errorf("kept %d bytes, starting %q", len(res.Content), res.Content[:40])
	}
	var meta map[string]any
	json.Unmarshal(res.Metadata, &meta)
	if meta["truncated"] != true {
		t.Errorf("metadata %v", meta)
	}
}
