package gate

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// readOnlyPrograms never change anything by themselves.
var readOnlyPrograms = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "rg": true, "egrep": true, "fgrep": true,
	"echo": true, "printf": true, "pwd": true, "which": true, "type": true, "file": true, "stat": true, "du": true, "df": true,
	"sort": true, "uniq": true, "cut": true, "tr": true, "diff": true, "cmp": true, "less": true, "more": true, "true": true,
	"false": true, "test": true, "[": true, "basename": true, "dirname": true, "realpath": true, "readlink": true, "date": true,
	"whoami": true, "id": true, "uname": true, "env": true, "printenv": true, "tree": true, "jq": true, "nl": true, "column": true,
	"sha256sum": true, "md5sum": true, "find": true, "awk": true, "sed": true,
}

var networkPrograms = map[string]bool{"curl": true, "wget": true, "ssh": true, "scp": true, "sftp": true, "nc": true,
	"ncat": true, "telnet": true, "ftp": true, "ping": true, "dig": true, "nslookup": true}

// judge returns one simple command's risk and why.
func judge(cmd []string) (tool.Risk, string) {
	prog := filepath.Base(cmd[0])
	args := cmd[1:]
	has := func(flags ...string) bool {
		for _, a := range args {
			if slices.Contains(flags, a) {
				return true
			}
		}
		return false
	}
	shortFlag := func(letters string) bool {
		for _, a := range args {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], letters) {
				return true
			}
		}
		return false
	}
	switch {
	case prog == "rm" && (shortFlag("rR") || has("--recursive")):
		return tool.RiskDestructive, "recursive delete"
	case prog == "git":
		return judgeGit(args)
	case strings.HasPrefix(prog, "mkfs") || prog == "shred" || prog == "wipefs" || prog == "fdisk" || prog == "mkswap":
		return tool.RiskDestructive, "destroys data"
	case prog == "dd" && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "of=/dev/") }):
		return tool.RiskDestructive, "writes a device"
	case (prog == "chmod" || prog == "chown" || prog == "chgrp") && (shortFlag("R") || has("--recursive")):
		return tool.RiskDestructive, "recursive permission change"
	case prog == "truncate":
		return tool.RiskDestructive, "truncates files"
	case prog == "find" && (has("-delete") || has("-exec") && slices.Contains(args, "rm")):
		return tool.RiskDestructive, "find deletes files"
	case sqlDrop(cmd):
		return tool.RiskDestructive, "drops a database object"
	case networkPrograms[prog]:
		return tool.RiskNetwork, "network access"
	case prog == "rsync" && slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, ":") }):
		return tool.RiskNetwork, "remote copy"
	case installs(prog, args):
		return tool.RiskNetwork, "installs packages"
	case prog == "sed" && (shortFlag("i") || has("--in-place")):
		return tool.RiskMutating, "edits files in place"
	case prog == "find" || prog == "awk":
		if has("-fprint") || has("system") {
			return tool.RiskExec, "runs programs"
		}
		return tool.RiskReadOnly, ""
	case readOnlyPrograms[prog]:
		return tool.RiskReadOnly, ""
	case prog == "rm" || prog == "mv" || prog == "cp" || prog == "mkdir" || prog == "touch" || prog == "ln" || prog == "rmdir" || prog == "tee":
		return tool.RiskMutating, "changes files"
	}
	return tool.RiskExec, "runs a program"
}

func judgeGit(args []string) (tool.Risk, string) {
	if len(args) == 0 {
		return tool.RiskReadOnly, ""
	}
	sub, rest := args[0], args[1:]
	has := func(s ...string) bool {
		return slices.ContainsFunc(rest, func(a string) bool { return slices.Contains(s, a) })
	}
	switch sub {
	case "status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "blame", "grep", "describe", "remote", "config", "tag":
		return tool.RiskReadOnly, ""
	case "reset":
		if has("--hard") {
			return tool.RiskDestructive, "git reset --hard discards work"
		}
	case "clean":
		for _, a := range rest {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "f") {
				return tool.RiskDestructive, "git clean deletes untracked files"
			}
		}
	case "push":
		if has("--force", "-f", "--force-with-lease", "--mirror", "--delete") || slices.ContainsFunc(rest, func(a string) bool { return strings.HasPrefix(a, "+") }) {
			return tool.RiskDestructive, "force push rewrites remote history"
		}
		return tool.RiskNetwork, "git push"
	case "fetch", "pull", "clone", "ls-remote", "submodule":
		return tool.RiskNetwork, "git " + sub
	case "checkout", "restore":
		if has("--", ".") || has("-f", "--force") {
			return tool.RiskDestructive, "discards working-tree changes"
		}
	case "stash":
		if has("drop", "clear") {
			return tool.RiskDestructive, "drops stashed work"
		}
	}
	return tool.RiskMutating, "git " + sub
}

// installs is true for package installs, which fetch code from the network.
func installs(prog string, args []string) bool {
	if len(args) == 0 {
		return false
	}
	sub := args[0]
	switch prog {
	case "apt", "apt-get", "yum", "dnf", "apk", "brew", "pacman", "zypper":
		return slices.Contains([]string{"install", "add", "upgrade", "update", "-S", "-Syu"}, sub)
	case "pip", "pip3", "uv", "poetry", "gem", "cargo":
		return slices.Contains([]string{"install", "add", "sync"}, sub)
	case "npm", "pnpm", "yarn", "bun":
		return slices.Contains([]string{"install", "i", "add", "ci", "update"}, sub) || (prog == "yarn" && len(args) == 0)
	case "go":
		return sub == "get" || (sub == "install" && slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "@") })) ||
			(sub == "mod" && len(args) > 1 && args[1] == "download")
	case "docker", "podman":
		return sub == "pull" || sub == "push"
	}
	return false
}

// sqlDrop spots DROP TABLE/DATABASE in SQL passed to a database client.
func sqlDrop(cmd []string) bool {
	line := strings.ToUpper(strings.Join(cmd, " "))
	return (strings.Contains(line, "DROP TABLE") || strings.Contains(line, "DROP DATABASE") || strings.Contains(line, "TRUNCATE TABLE")) &&
		filepath.Base(cmd[0]) != "echo" && filepath.Base(cmd[0]) != "printf"
}
