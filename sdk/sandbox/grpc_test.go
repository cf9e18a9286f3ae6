package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/sparrow-cli/sparrow/sdk/sandbox"
)

// trap waits for signals and reports them, like `trap` in a shell.
type trap struct{}

func (trap) Name() string { return "trap" }
func (trap) Capabilities(context.Context) (sandbox.Capabilities, error) {
	return sandbox.Capabilities{Available: false, UnavailableReason: "no trap here", Remote: true}, nil
}
func (trap) Prepare(context.Context, sandbox.PrepareRequest) (sandbox.Session, error) {
	return sandbox.Session{}, nil
}
func (trap) Teardown(context.Context, string) error { return nil }
func (trap) Exec(ctx context.Context, r sandbox.ExecRequest, sio sandbox.IO) (sandbox.Exit, error) {
	fmt.Fprintf(sio.Stdout, "ready %v %s\n", r.Limits.Timeout, r.Env["K"])
	select {
	case sig := <-sio.Signals:
		fmt.Fprintf(sio.Stdout, "got %s\n", sig)
		return sandbox.Exit{Code: 130, Signal: sig, Duration: 1500 * time.Millisecond}, nil
	case <-ctx.Done():
		return sandbox.Exit{}, ctx.Err()
	}
}

func connect(t *testing.T) sandbox.Sandbox {
	t.Helper()
	client, server := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{
		"sandbox": &sandbox.Plugin{Sandboxes: []sandbox.Sandbox{trap{}}},
	})
	_ = server // client.Close shuts the server down through go-plugin's controller
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense("sandbox")
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*sandbox.Client).Sandbox("trap")
}

func TestSignalsCrossTheWire(t *testing.T) {
	sb := connect(t)
	pr, pw := io.Pipe()
	sigs := make(chan string, 1)
	done := make(chan sandbox.Exit, 1)
	go func() {
		exit, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"x"}, Env: map[string]string{"K": "v"},
			Limits: sandbox.Limits{Timeout: 3 * time.Second}}, sandbox.IO{Stdout: pw, Signals: sigs})
		if err != nil {
			t.Error(err)
		}
		pw.Close()
		done <- exit
	}()
	buf := make([]byte, 64)
	n, _ := pr.Read(buf)
	if got := string(buf[:n]); got != "ready 3s v\n" {
		t.Fatalf("first output %q", got)
	}
	sigs <- "INT"
	rest, _ := io.ReadAll(pr)
	exit := <-done
	if string(rest) != "got INT\n" || exit.Code != 130 || exit.Signal != "INT" || exit.Duration != 1500*time.Millisecond {
		t.Fatalf("rest %q exit %+v", rest, exit)
	}
}

func TestCapabilitiesAndErrors(t *testing.T) {
	sb := connect(t)
	caps, err := sb.Capabilities(context.Background())
	if err != nil || caps.Available || caps.UnavailableReason != "no trap here" || !caps.Remote {
		t.Fatalf("caps %+v, %v", caps, err)
	}
	if _, err := sb.Exec(context.Background(), sandbox.ExecRequest{}, sandbox.IO{}); err == nil || !strings.Contains(err.Error(), "argv is empty") {
		t.Fatalf("empty argv: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"x"}}, sandbox.IO{}); err == nil {
		t.Fatal("exec outlived its context")
	}
}
