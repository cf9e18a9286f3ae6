package gate

import (
	"path/filepath"
	"slices"
	"strings"
)

// wrappers run another command; each maps to its options that take a
// separate value (so `nice -n 5 rm` unwraps to `rm`, not `5 rm`).
var wrappers = map[string][]string{
	"sudo":     {"-u", "-g", "-C", "-h", "-p", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--close-from", "--other-user"},
	"doas":     {"-u", "-C"},
	"env":      {"-u", "-C", "--unset", "--chdir"},
	"nice":     {"-n", "--adjustment"},
	"ionice":   {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"},
	"timeout":  {"-s", "-k", "--signal", "--kill-after"},
	"xargs":    {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace", "--eof", "--max-chars", "--process-slot-var"},
	"stdbuf":   {"-i", "-o", "-e", "--input", "--output", "--error"},
	"time":     {"-f", "-o", "--format", "--output"},
	"exec":     {"-a"},
	"command":  nil,
	"builtin":  nil,
	"nohup":    nil,
	"setsid":   nil,
	"chronic":  nil,
	"unbuffer": nil,
	"busybox":  nil,
}

// unwrap removes wrapper programs with their options and VAR=value words
// and returns the command that really runs. escalated is set when sudo or
// doas was among the wrappers. A wrapper with nothing to run returns
// nothing, except sudo and doas (a root shell) and xargs (echo).
func unwrap(argv []string) (cmd []string, escalated bool) {
	for len(argv) > 0 {
		head := filepath.Base(argv[0])
		valued, ok := wrappers[head]
		if !ok {
			return argv, escalated
		}
		if head == "sudo" || head == "doas" {
			escalated = true
		}
		if head == "command" && len(argv) > 1 && (argv[1] == "-v" || argv[1] == "-V") {
			return nil, escalated // a lookup, nothing runs
		}
		argv = skipOptions(head, argv[1:], valued)
		if len(argv) == 0 {
			switch head {
			case "sudo", "doas":
				return []string{"sh"}, true
			case "xargs":
				return []string{"echo"}, escalated
			}
		}
	}
	return nil, escalated
}

// skipOptions drops a wrapper's options, its VAR=value words (env, sudo)
// and timeout's duration; env -S splits its string into arguments.
func skipOptions(head string, args, valued []string) []string {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return args[1:]
		case head == "env" && (a == "-S" || a == "--split-string") && len(args) > 1:
			return append(strings.Fields(args[1]), args[2:]...)
		case head == "env" && strings.HasPrefix(a, "--split-string="):
			return append(strings.Fields(strings.TrimPrefix(a, "--split-string=")), args[1:]...)
		case head == "env" && strings.HasPrefix(a, "-S") && len(a) > 2:
			return append(strings.Fields(a[2:]), args[1:]...)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if slices.Contains(valued, a) && len(args) > 1 {
				args = args[1:]
			}
			args = args[1:]
		case (head == "env" || head == "sudo" || head == "doas") && isAssignment(a):
			args = args[1:]
		case head == "timeout":
			return args[1:]
		default:
			return args
		}
	}
	return args
}

// isAssignment reports whether s is NAME=value.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
