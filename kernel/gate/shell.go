package gate

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// maxDepth bounds nested scripts (sh -c "sh -c '…'").
const maxDepth = 8

// AnalyzeShell judges a shell command line by what it runs. It parses the
// line with mvdan.cc/sh and judges every simple command in pipes, && and
// || chains, subshells, blocks, loops, functions, command and process
// substitutions, here-documents and strings fed to a shell, `sh -c` /
// `bash -c` scripts, `eval` and `find -exec`, after removing wrappers
// (env, sudo, nice, nohup, timeout, xargs, command, exec, time, …) with
// their options and VAR=value words. Redirections that write files count
// as mutating, writes to block devices as destructive.
//
// The risk is the highest found (read-only < mutating < exec < network <
// destructive); reasons explain every finding above read-only. A line that
// does not parse is destructive with reason "cannot parse: …" and a
// non-nil error: the gate fails closed.
func AnalyzeShell(cmd string) (risk tool.Risk, reasons []string, err error) {
	a, err := analyze(cmd)
	if err != nil {
		return tool.RiskDestructive, []string{"cannot parse: " + err.Error()}, err
	}
	return a.risk, a.reasons, nil
}

// analysis is what the walk learns about a command line.
type analysis struct {
	risk tool.Risk
	// top is the reason for the highest risk.
	top     string
	reasons []string
	// commands are the simple commands, wrappers removed, git's global
	// options dropped; rules match command prefixes against them.
	commands [][]string
	// words may name files: arguments, redirection targets, assigned
	// values; the gate checks them against denied paths.
	words []string
	// network is set when any command talks to the network, whatever
	// risk ranks highest (`git pull && rm -rf build` is destructive).
	network bool
}

func analyze(cmd string) (*analysis, error) {
	a := &analysis{risk: tool.RiskReadOnly}
	if err := a.script(cmd, 0); err != nil {
		return nil, err
	}
	return a, nil
}

// raise records a finding.
func (a *analysis) raise(r tool.Risk, why string) {
	if r == tool.RiskNetwork {
		a.network = true
	}
	if r != tool.RiskReadOnly && why != "" {
		a.reasons = append(a.reasons, why)
	}
	if riskRank(r) > riskRank(a.risk) || a.top == "" && r == a.risk && r != tool.RiskReadOnly {
		a.risk, a.top = r, why
	}
}

// script parses and walks one script.
func (a *analysis) script(src string, depth int) error {
	if depth > maxDepth {
		return errors.New("commands nested too deeply")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return err
	}
	var werr error
	syntax.Walk(f, func(n syntax.Node) bool {
		if werr != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			werr = a.stmt(n, depth)
		case *syntax.BinaryCmd:
			werr = a.pipe(n, depth)
		case *syntax.CallExpr:
			werr = a.call(n, depth)
		case *syntax.Assign:
			if n.Value != nil {
				a.words = append(a.words, text(n.Value))
			}
		}
		return true
	})
	return werr
}

// stmt judges a statement's redirections; its command is walked apart.
func (a *analysis) stmt(s *syntax.Stmt, depth int) error {
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if err := a.feed(stmtArgv(s), hdocText(r.Hdoc), depth); err != nil {
				return err
			}
			continue
		case syntax.WordHdoc:
			if err := a.feed(stmtArgv(s), text(r.Word), depth); err != nil {
				return err
			}
			continue
		}
		target := text(r.Word)
		a.words = append(a.words, target)
		switch r.Op {
		case syntax.RdrIn, syntax.DplIn:
			continue
		case syntax.DplOut:
			if target == "-" || strings.Trim(target, "0123456789") == "" {
				continue
			}
		}
		a.write(target)
	}
	return nil
}

// write judges a redirection that writes target.
func (a *analysis) write(target string) {
	switch {
	case slices.Contains([]string{"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}, target),
		strings.HasPrefix(target, "/dev/fd/"):
	case isBlockDevice(target):
		a.raise(tool.RiskDestructive, "writes to the device "+target)
	default:
		a.raise(tool.RiskMutating, "writes "+target)
	}
}

// pipe analyses text piped into a shell or a database client.
func (a *analysis) pipe(b *syntax.BinaryCmd, depth int) error {
	if b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
		return nil
	}
	if body, ok := pipedText(b.X); ok {
		return a.feed(stmtArgv(b.Y), body, depth)
	}
	return nil
}

// feed judges text given on standard input to the command argv: a shell
// runs it as a script, a database client as SQL.
func (a *analysis) feed(argv []string, body string, depth int) error {
	if len(argv) == 0 {
		return nil
	}
	prog := filepath.Base(argv[0])
	switch {
	case readsScript(argv):
		return a.script(body, depth+1)
	case dbClients[prog] && sqlDestroys(body):
		a.raise(tool.RiskDestructive, prog+": drops or truncates a database object")
	}
	return nil
}

// call judges one simple command.
func (a *analysis) call(c *syntax.CallExpr, depth int) error {
	if len(c.Args) == 0 {
		return nil
	}
	argv := make([]string, len(c.Args))
	for i, w := range c.Args {
		argv[i] = text(w)
	}
	return a.command(argv, depth)
}

// command judges argv after removing wrappers; scripts inside it (sh -c,
// eval, find -exec) are judged in turn.
func (a *analysis) command(argv []string, depth int) error {
	a.words = append(a.words, pathWords(argv)...)
	cmd, escalated := unwrap(argv)
	if escalated {
		a.raise(tool.RiskExec, strings.Join(argv, " ")+": runs as another user")
	}
	if len(cmd) == 0 {
		return nil
	}
	prog := filepath.Base(cmd[0])
	if strings.Contains(prog, dynamic) {
		a.commands = append(a.commands, cmd)
		a.raise(tool.RiskDestructive, shorten(cmd)+": the program is only known at run time")
		return nil
	}
	if prog == "git" && gitRunsConfig(cmd) {
		a.raise(tool.RiskExec, shorten(cmd)+": git -c can run any program")
	}
	cmd = normalize(cmd)
	if script, ok := inlineScript(prog, cmd); ok {
		return a.script(script, depth+1)
	}
	if prog == "find" {
		for _, sub := range findExecs(cmd) {
			if err := a.command(sub, depth+1); err != nil {
				return err
			}
		}
	}
	a.commands = append(a.commands, cmd)
	r, why := judge(cmd)
	a.raise(r, shorten(cmd)+": "+why)
	return nil
}

// shorten renders a command for a reason.
func shorten(cmd []string) string {
	s := strings.Join(cmd, " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// stmtArgv is the unwrapped argv of a statement's simple command, or nil.
func stmtArgv(s *syntax.Stmt) []string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return nil
	}
	argv := make([]string, len(c.Args))
	for i, w := range c.Args {
		argv[i] = text(w)
	}
	cmd, _ := unwrap(argv)
	return cmd
}

// hdocText is a here-document's body as written.
func hdocText(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			b.WriteString(dynamic)
		}
	}
	return b.String()
}

// pipedText is the text a statement writes to a pipe when it is known:
// the arguments of echo or printf, or the here-document of cat.
func pipedText(s *syntax.Stmt) (string, bool) {
	argv := stmtArgv(s)
	if len(argv) == 0 {
		return "", false
	}
	switch filepath.Base(argv[0]) {
	case "echo":
		args := argv[1:]
		for len(args) > 0 && slices.Contains([]string{"-n", "-e", "-E", "-ne", "-en"}, args[0]) {
			args = args[1:]
		}
		return strings.ReplaceAll(strings.Join(args, " "), `\n`, "\n"), true
	case "printf":
		return strings.ReplaceAll(strings.Join(argv[1:], " "), `\n`, "\n"), true
	case "cat":
		for _, r := range s.Redirs {
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				return hdocText(r.Hdoc), true
			case syntax.WordHdoc:
				return text(r.Word), true
			}
		}
	}
	return "", false
}

// isShell reports whether prog is a shell.
func isShell(prog string) bool {
	return slices.Contains([]string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"}, prog)
}

// readsScript reports whether argv is a shell that reads its script from
// standard input (no -c, no script file).
func readsScript(argv []string) bool {
	if len(argv) == 0 || !isShell(filepath.Base(argv[0])) {
		return false
	}
	if _, ok := dashC(argv); ok {
		return false
	}
	return !slices.ContainsFunc(argv[1:], func(s string) bool { return !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") })
}

// inlineScript returns the script a command runs from its arguments:
// sh -c SCRIPT, su -c SCRIPT, eval ARGS…, watch ARGS…, trap SCRIPT
// SIGNAL…, git submodule foreach SCRIPT.
func inlineScript(prog string, cmd []string) (string, bool) {
	switch {
	case isShell(prog) || prog == "su":
		return dashC(cmd)
	case prog == "eval":
		return strings.Join(cmd[1:], " "), len(cmd) > 1
	case prog == "watch":
		rest := skipOptions("watch", cmd[1:], []string{"-n", "--interval", "-q", "--equexit"})
		return strings.Join(rest, " "), len(rest) > 0
	case prog == "trap" && len(cmd) > 2 && !strings.HasPrefix(cmd[1], "-"):
		return cmd[1], true
	case prog == "git" && len(cmd) > 3 && cmd[1] == "submodule" && slices.Contains(cmd[2:], "foreach"):
		i := slices.Index(cmd, "foreach")
		return strings.Join(cmd[i+1:], " "), i+1 < len(cmd)
	}
	return "", false
}

// dashC returns the script of `sh -c SCRIPT`; options may come before -c
// or be bundled with it (-ec, -xc). After a script file name, -c belongs
// to the script, except for su, whose user name may come first.
func dashC(cmd []string) (string, bool) {
	su := filepath.Base(cmd[0]) == "su"
	for i := 1; i < len(cmd); i++ {
		a := cmd[i]
		switch {
		case su && strings.HasPrefix(a, "--command="):
			return strings.TrimPrefix(a, "--command="), true
		case a == "-c" || su && a == "--command":
			if i+1 < len(cmd) {
				return cmd[i+1], true
			}
			return "", false
		case a == "--":
			return "", false
		case slices.Contains([]string{"-o", "+o", "-O", "+O"}, a):
			i++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.Contains(a[1:], "c") && i+1 < len(cmd) {
				return cmd[i+1], true
			}
		case strings.HasPrefix(a, "+") && len(a) > 1:
		case !su:
			return "", false
		}
	}
	return "", false
}

// findExecs returns the commands of find's -exec, -execdir, -ok and
// -okdir actions.
func findExecs(cmd []string) [][]string {
	var out [][]string
	for i := 1; i < len(cmd); i++ {
		if !slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, cmd[i]) {
			continue
		}
		j := i + 1
		for j < len(cmd) && cmd[j] != ";" && cmd[j] != "+" {
			j++
		}
		if j > i+1 {
			out = append(out, cmd[i+1:j])
		}
		i = j
	}
	return out
}

// patternOptions take a pattern, not a path: their values are not checked
// against denied paths (grep --exclude-dir=.git must stay possible).
var patternOptions = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "--exclude": true, "--exclude-dir": true, "--include": true,
	"--include-dir": true, "--glob": true, "-g": true, "--iglob": true, "--ignore": true, "--ignore-dir": true,
}

// pathWords are the words of argv that may name files.
func pathWords(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		w := argv[i]
		if patternOptions[w] {
			i++
			continue
		}
		if k, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(k, "-") {
			if !patternOptions[k] {
				out = append(out, v)
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// normalize drops git's global options (git -C dir -c k=v push → git
// push) so rules and the judge see the subcommand.
func normalize(cmd []string) []string {
	if filepath.Base(cmd[0]) != "git" {
		return cmd
	}
	i := 1
	for i < len(cmd) && strings.HasPrefix(cmd[i], "-") {
		if slices.Contains([]string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"}, cmd[i]) {
			i++
		}
		i++
	}
	return append([]string{cmd[0]}, cmd[min(i, len(cmd)):]...)
}

// isBlockDevice reports whether p names a disk device.
func isBlockDevice(p string) bool {
	for _, prefix := range []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk", "/dev/mapper/", "/dev/md", "/dev/dm-", "/dev/loop", "/dev/rdisk"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}
