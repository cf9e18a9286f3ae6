package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sparrow-cli/sparrow/kernel/gate"
	"github.com/sparrow-cli/sparrow/sdk/sandbox"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// grant is a Host token's authority: the tool call it was issued for.
type grant struct {
	tool, command, callID string
	// network is set when the gate allowed that call as one reaching the
	// network (gate.Verdict.Network).
	network bool
}

// HostExec serves a tool plugin's Host.Exec: it finds the call the token
// was issued for, gates the actual command (unless it is exactly the one
// already gated for that call), and runs it in the run's sandbox session.
// Refusals are exit status 126 with the reason on stderr. The command gets
// network exactly when the gate allowed it as a call that reaches the
// network; what the plugin asked for in req.AllowNetwork does not count.
func (e *Engine) HostExec(ctx context.Context, token string, req sandbox.ExecRequest, io sandbox.IO) (sandbox.Exit, error) {
	e.mu.Lock()
	g := e.grants[token]
	e.mu.Unlock()
	if g == nil {
		return sandbox.Exit{}, fmt.Errorf("host exec: unknown or expired call token")
	}
	if len(req.Argv) == 0 {
		return sandbox.Exit{}, fmt.Errorf("host exec: empty argv")
	}
	command := commandLine(req.Argv)
	network := g.network
	if command != g.command {
		call := gate.Call{Tool: g.tool, Risk: tool.RiskExec, Command: command}
		if req.Workdir != "" {
			call.Arguments = map[string]any{"workdir": req.Workdir}
			call.PathArguments = []string{"workdir"}
		}
		v := e.o.Gate.Decide(call)
		if v.Decision == gate.Ask && e.runApproved(call) {
			v.Decision = gate.Allow
		}
		if v.Decision == gate.Ask {
			p := &prepared{call: providerCall(g), gcall: call, verdict: v}
			if ok, why := e.ask(ctx, p); !ok {
				v.Decision, v.Reason = gate.Deny, why
			} else {
				v.Decision = gate.Allow
			}
		}
		if v.Decision != gate.Allow {
			fmt.Fprintf(orDiscard(io.Stderr), "sparrow: not run: %s (%s)\n", v.Reason, v.Rule)
			return sandbox.Exit{Code: 126}, nil
		}
		network = v.Network
	}
	req.AllowNetwork = network
	req.SessionID = e.o.Session.ID
	switch {
	case req.Workdir == "":
		req.Workdir = e.o.Session.Workdir
	case !filepath.IsAbs(req.Workdir):
		req.Workdir = filepath.Join(e.o.Session.Workdir, req.Workdir)
	}
	if req.Limits.Timeout <= 0 || req.Limits.Timeout > e.o.ExecTimeout {
		req.Limits.Timeout = e.o.ExecTimeout
	}
	return e.o.Sandbox.Exec(ctx, req, io)
}

// commandLine is what the gate judges: the script of `sh -c SCRIPT`, or
// the argv joined with shell quoting.
func commandLine(argv []string) string {
	if len(argv) == 3 && (argv[0] == "/bin/sh" || argv[0] == "sh" || argv[0] == "/bin/bash" || argv[0] == "bash") && argv[1] == "-c" {
		return argv[2]
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}~#!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}
