package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// AnalyzeShell judges a shell command line by what it runs: every simple
// command in pipes, && chains, subshells, command substitutions and
// `sh -c` scripts, with wrappers (env, sudo, xargs, …) unwrapped. It
// returns the highest risk found and why.
func AnalyzeShell(cmd string) (tool.Risk, []string, error) {
	risk, commands, _, err := analyze(cmd)
	if err != nil {
		return tool.RiskDestructive, []string{"cannot parse: " + err.Error()}, err
	}
	var reasons []string
	for _, c := range commands {
		if r, why := judge(c); r != tool.RiskReadOnly {
			reasons = append(reasons, fmt.Sprintf("%s: %s", strings.Join(c, " "), why))
		}
	}
	return risk, reasons, nil
}

// analyze parses cmd and returns its risk, its simple commands (wrappers
// removed) and every literal word, for denied-path checks.
func analyze(cmd string) (tool.Risk, [][]string, []string, error) {
	return analyzeDepth(cmd, 0)
}

func analyzeDepth(cmd string, depth int) (tool.Risk, [][]string, []string, error) {
	if depth > 4 {
		return tool.RiskDestructive, nil, nil, fmt.Errorf("nested too deep")
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return tool.RiskDestructive, nil, nil, err
	}
	risk := tool.RiskReadOnly
	var commands [][]string
	var words []string
	var walkErr error
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Op == syntax.RdrOut || n.Op == syntax.AppOut || n.Op == syntax.RdrAll || n.Op == syntax.AppAll || n.Op == syntax.ClbOut {
				target := literal(n.Word)
				if target != "/dev/null" && !strings.HasPrefix(target, "&") {
					risk = maxRisk(risk, tool.RiskMutating)
					if strings.HasPrefix(target, "/dev/sd") || strings.HasPrefix(target, "/dev/nvme") {
						risk = tool.RiskDestructive
					}
				}
			}
		case *syntax.CallExpr:
			args := make([]string, 0, len(n.Args))
			for _, w := range n.Args {
				args = append(args, literal(w))
			}
			words = append(words, args...)
			cmd := unwrap(args)
			if len(cmd) == 0 {
				return true
			}
			if isShell(cmd[0]) {
				if script, ok := dashC(cmd); ok {
					r, cs, ws, err := analyzeDepth(script, depth+1)
					if err != nil {
						walkErr = err
					}
					risk = maxRisk(risk, r)
					commands = append(commands, cs...)
					words = append(words, ws...)
					return true
				}
			}
			commands = append(commands, cmd)
			r, _ := judge(cmd)
			risk = maxRisk(risk, r)
		}
		return true
	})
	if walkErr != nil {
		return tool.RiskDestructive, commands, words, walkErr
	}
	return risk, commands, words, nil
}

// literal is a word's text with quotes removed; expansions are kept as
// written ("$HOME"), which is what a prefix or pattern check needs.
func literal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				} else {
					b.WriteString("$…")
				}
			}
		default:
			b.WriteString("$…")
		}
	}
	return b.String()
}

var wrappers = map[string]bool{"sudo": true, "env": true, "nice": true, "nohup": true, "timeout": true,
	"xargs": true, "command": true, "exec": true, "time": true, "doas": true, "stdbuf": true, "ionice": true}

// valued are wrapper options followed by a separate value.
var valued = map[string]bool{"-n": true, "-u": true, "-g": true, "-s": true, "-k": true, "-c": true, "-C": true, "-I": true, "-P": true, "-L": true}

// unwrap removes wrapper programs, their options and VAR=value words.
func unwrap(args []string) []string {
	for len(args) > 0 {
		head := filepath.Base(args[0])
		if strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "=") {
			args = args[1:]
			continue
		}
		if !wrappers[head] {
			return args
		}
		args = args[1:]
		for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=") ||
			(head == "timeout" && isNumberish(args[0]))) {
			// Options that take a value: nice -n 5, sudo -u root, timeout -s KILL.
			if valued[args[0]] && len(args) > 1 {
				args = args[1:]
			}
			args = args[1:]
		}
	}
	return nil
}

func isNumberish(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhd") == ""
}

func isShell(name string) bool {
	return slices.Contains([]string{"sh", "bash", "zsh", "dash", "ksh"}, filepath.Base(name))
}

// dashC returns the script of `sh -c SCRIPT` (options may precede -c).
func dashC(cmd []string) (string, bool) {
	for i := 1; i < len(cmd)-1; i++ {
		if cmd[i] == "-c" || (strings.HasPrefix(cmd[i], "-") && strings.Contains(cmd[i], "c") && !strings.HasPrefix(cmd[i], "--")) {
			return cmd[i+1], true
		}
	}
	return "", false
}
