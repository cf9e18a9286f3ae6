package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/sparrow-cli/sparrow/kernel/engine"
)

// approver answers the gate's questions: --yes approves, no terminal
// denies with a clear reason, a terminal asks.
type approver struct {
	yes   bool
	tty   bool
	in    *bufio.Reader
	out   io.Writer
	r     renderer
	color bool
}

func (a *app) approver(yes bool, r renderer) engine.Approver {
	tty := false
	if f, ok := a.env.Stdin.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &approver{yes: yes, tty: tty, in: bufio.NewReader(a.env.Stdin), out: a.env.Stderr, r: r,
		color: colorOK(a.env.Stderr, a.env.Getenv)}
}

func (ap *approver) Approve(ctx context.Context, req engine.ApprovalRequest) (engine.Approval, error) {
	switch {
	case ap.yes:
		return engine.Approval{Approved: true, By: "--yes"}, nil
	case !ap.tty:
		return engine.Approval{By: "no-tty", Reason: "it needs approval and there is no terminal to ask; pass --yes or raise --autonomy"}, nil
	}
	ap.r.sync()
	for {
		fmt.Fprintf(ap.out, "\n? Allow %s  [%s]\n  [y]es  [n]o  [a]lways this run  [e]xplain > ", req.Summary, req.Verdict.Risk)
		answer, err := ap.readLine(ctx)
		if err != nil {
			return engine.Approval{By: "user", Reason: "no answer: " + err.Error()}, nil
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return engine.Approval{Approved: true, By: "user"}, nil
		case "a", "always":
			return engine.Approval{Approved: true, ForRun: true, By: "user"}, nil
		case "n", "no", "":
			return engine.Approval{By: "user"}, nil
		case "e", "explain":
			fmt.Fprintf(ap.out, "  The gate asks because: %s (%s).\n", req.Verdict.Reason, req.Verdict.Rule)
		}
	}
}

// readLine reads an answer, giving up when the run is cancelled.
func (ap *approver) readLine(ctx context.Context) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := ap.in.ReadString('\n')
		ch <- result{s, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r := <-ch:
		return r.s, r.err
	}
}
