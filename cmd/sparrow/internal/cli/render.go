package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/config"
	"github.com/sparrow-cli/sparrow/kernel/engine"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

// renderer shows a run to the user.
type renderer interface {
	subscribe(b *bus.Bus)
	// sync waits until every event published so far has been shown.
	sync()
	finish(res engine.Result, dir string)
}

func (a *app) renderer(jsonOut bool) renderer {
	if jsonOut {
		return &jsonRenderer{w: bufio.NewWriter(a.env.Stdout)}
	}
	return &humanRenderer{out: a.env.Stdout, errw: a.env.Stderr, color: colorOK(a.env.Stdout, a.env.Getenv),
		calls: map[string]string{}}
}

// colorOK is true for a terminal, unless NO_COLOR is set.
func colorOK(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// jsonRenderer prints every event as one NDJSON line. It subscribes
// synchronously: a consumer of --json gets every event, so a slow reader
// applies back-pressure rather than losing lines.
type jsonRenderer struct {
	w *bufio.Writer
}

func (r *jsonRenderer) subscribe(b *bus.Bus) {
	b.SubscribeSync("json", func(e event.Event) error {
		if err := event.Encode(r.w, e); err != nil {
			return err
		}
		return r.w.Flush()
	})
}

func (r *jsonRenderer) sync()                        {}
func (r *jsonRenderer) finish(engine.Result, string) { _ = r.w.Flush() }

// humanRenderer streams assistant text, one line per tool call with its
// verdict, coloured diffs and a closing summary.
type humanRenderer struct {
	out, errw io.Writer
	color     bool

	mu        sync.Mutex
	cond      *sync.Cond
	published uint64
	shown     uint64
	midText   bool
	calls     map[string]string // call id → one-line summary
}

func (r *humanRenderer) subscribe(b *bus.Bus) {
	r.cond = sync.NewCond(&r.mu)
	b.SubscribeSync("counter", func(e event.Event) error {
		r.mu.Lock()
		r.published = e.Seq
		r.mu.Unlock()
		return nil
	})
	// Never drop: a terminal must show the text whole; it is async so a
	// stalled terminal cannot stall the engine.
	b.Subscribe("terminal", -1, func(e event.Event) {
		r.show(e)
		r.mu.Lock()
		r.shown = e.Seq
		r.cond.Broadcast()
		r.mu.Unlock()
	})
}

func (r *humanRenderer) sync() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.shown < r.published {
		r.cond.Wait()
	}
}

const (
	dim, red, green, yellow, cyan, bold, reset = "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[1m", "\x1b[0m"
)

func (r *humanRenderer) paint(code, s string) string {
	if !r.color {
		return s
	}
	return code + s + reset
}

func (r *humanRenderer) endText() {
	if r.midText {
		fmt.Fprintln(r.out)
		r.midText = false
	}
}

func (r *humanRenderer) show(e event.Event) {
	switch p := e.Payload.(type) {
	case *event.RunStarted:
		mode := ""
		if p.Mode != "" {
			mode = p.Mode + " mode, "
		}
		fmt.Fprintf(r.out, "%s %s · %s · sandbox %s · %sautonomy %.2f (%s)\n", r.paint(bold, "⚓ sparrow"), p.Model, p.Provider, p.Sandbox, mode, p.Autonomy, config.AutonomyName(p.Autonomy))
	case *event.Message:
		if p.Delta {
			fmt.Fprint(r.out, p.Text)
			r.midText = !strings.HasSuffix(p.Text, "\n")
		} else {
			r.endText()
		}
	case *event.ToolUseProposed:
		r.calls[p.CallID] = callSummary(p.Tool, p.Arguments)
	case *event.ToolUseStarted:
		r.endText()
		mark := r.paint(green, "✓")
		if p.Verdict.Decision == "deny" {
			mark = r.paint(red, "✗ denied:")
		}
		fmt.Fprintf(r.out, "%s %s %s %s\n", r.paint(cyan, "▸"), r.calls[p.CallID], mark, r.paint(dim, p.Verdict.Reason))
	case *event.ToolOutput:
		r.showOutput(p)
	case *event.DiffApplied:
		r.showDiff(p)
	case *event.ModelSwitched:
		fmt.Fprintf(r.errw, "%s %s → %s: %s\n", r.paint(yellow, "⚠ switching model"), p.From, p.To, p.Reason)
	case *event.TestResult:
		if p.Passed {
			fmt.Fprintf(r.out, "%s %s\n", r.paint(green, "✓ verify passed:"), strings.Join(p.Command, " "))
		} else {
			fmt.Fprintf(r.out, "%s %s (exit %d)\n%s\n", r.paint(red, "✗ verify failed:"), strings.Join(p.Command, " "), p.ExitCode, r.paint(dim, lastLines(p.Output, 15)))
		}
	case *event.Error:
		r.endText()
		fmt.Fprintf(r.errw, "%s %s\n", r.paint(red, "✗ "+p.Source+":"), p.Message)
	}
}

func (r *humanRenderer) showOutput(p *event.ToolOutput) {
	if !p.Final {
		fmt.Fprint(r.out, r.paint(dim, indent(p.Text)))
		return
	}
	if p.IsError {
		fmt.Fprintf(r.out, "  %s\n", r.paint(red, firstLineOf(p.Text)))
	}
}

func (r *humanRenderer) showDiff(p *event.DiffApplied) {
	fmt.Fprintf(r.out, "  %s %s\n", r.paint(bold, p.Path), r.paint(dim, fmt.Sprintf("+%d -%d", p.Added, p.Removed)))
	for _, line := range strings.Split(strings.TrimRight(p.Diff, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---"):
			continue
		case strings.HasPrefix(line, "+"):
			line = r.paint(green, line)
		case strings.HasPrefix(line, "-"):
			line = r.paint(red, line)
		case strings.HasPrefix(line, "@@"):
			line = r.paint(cyan, line)
		}
		fmt.Fprintf(r.out, "    %s\n", line)
	}
}

func (r *humanRenderer) finish(res engine.Result, dir string) {
	r.sync()
	r.endText()
	r.printSummary(res, dir)
}

// printSummary is the closing line of a run.
func (r *humanRenderer) printSummary(res engine.Result, dir string) {
	status := r.paint(green, res.Status)
	if res.Status != event.StatusCompleted {
		status = r.paint(red, res.Status)
		if res.Reason != "" {
			status += ": " + res.Reason
		}
	}
	files := fmt.Sprintf("%d files changed", len(res.FilesChanged))
	if len(res.FilesChanged) == 1 {
		files = "1 file changed"
	}
	fmt.Fprintf(r.out, "\n%s %s · %d turns · %d in / %d out tokens · $%.4f · %s · %s\n",
		r.paint(bold, "⚓"), status, res.Turns, res.InputTokens, res.OutputTokens, res.CostUSD, files, res.Duration.Round(10*time.Millisecond))
	if dir != "" {
		fmt.Fprintf(r.out, "%s\n", r.paint(dim, "recorded in "+dir))
	}
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "")
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
