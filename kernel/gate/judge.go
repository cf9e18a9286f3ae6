package gate

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// readOnlyPrograms change nothing by themselves (find, sed, awk, sort and
// git are judged by their arguments).
var readOnlyPrograms = setOf(
	"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack", "echo", "printf", "pwd",
	"which", "whereis", "type", "file", "stat", "du", "df", "uniq", "cut", "tr", "diff", "cmp", "comm",
	"less", "more", "true", "false", "test", "[", "basename", "dirname", "realpath", "readlink", "date",
	"whoami", "id", "uname", "hostname", "printenv", "tree", "jq", "yq", "nl", "column", "sha256sum",
	"sha1sum", "sha512sum", "md5sum", "shasum", "cksum", "b2sum", "xxd", "od", "hexdump", "strings", "tac",
	"rev", "fold", "fmt", "paste", "join", "expand", "unexpand", "seq", "sleep", "cd", "pushd", "popd",
	"dirs", ":", "exit", "return", "break", "continue", "shift", "set", "unset", "export", "declare",
	"local", "readonly", "typeset", "wait", "hash", "help", "man", "ps", "pgrep", "uptime", "free", "nproc",
	"fd", "bat", "cal", "getconf", "locale", "env", "tty", "groups", "lsblk", "look", "zcat", "zgrep",
)

// networkPrograms talk to other machines.
var networkPrograms = setOf(
	"curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "ping", "dig",
	"nslookup", "host", "whois", "mosh", "http", "https", "xh", "aria2c", "gh", "glab", "aws", "gcloud",
	"az", "doctl", "flyctl", "heroku", "vercel", "netlify", "npx", "pnpx", "bunx", "uvx", "pipx", "nmap",
	"ollama",
)

// dbClients run SQL.
var dbClients = setOf("psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "duckdb", "clickhouse-client", "cockroach", "mongosh")

// diskTools wipe or repartition disks.
var diskTools = setOf("shred", "wipefs", "fdisk", "sfdisk", "gdisk", "parted", "mkswap", "blkdiscard", "truncate",
	"shutdown", "reboot", "halt", "poweroff")

// fileTools change files and nothing else.
var fileTools = setOf("cp", "mv", "mkdir", "touch", "ln", "rmdir", "tee", "install", "patch", "unzip", "gunzip",
	"tar", "zip", "gzip", "unlink", "mktemp")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// sqlDestroy spots statements that destroy data.
var sqlDestroy = regexp.MustCompile(`(?i)\b(DROP\s+(TABLE|DATABASE|SCHEMA|INDEX|VIEW)|TRUNCATE\s+(TABLE\s+)?\w|dropDatabase\s*\(|\.drop\s*\()`)

// sedWritesOrRuns spots sed's w, W and e commands and s///w, s///e flags.
var sedWritesOrRuns = regexp.MustCompile(`(/[gpiImM0-9]*[weW]\b)|((^|[;{\n])\s*[0-9,$]*\s*[weW]\s)`)

func sqlDestroys(s string) bool { return sqlDestroy.MatchString(s) }

// judge returns one simple command's risk and a short reason.
func judge(cmd []string) (tool.Risk, string) {
	prog, args := filepath.Base(cmd[0]), cmd[1:]
	if r, why, ok := judgeByName(prog, args); ok {
		return r, why
	}
	switch {
	case strings.HasPrefix(prog, "mkfs"):
		return tool.RiskDestructive, "makes a file system"
	case diskTools[prog]:
		return tool.RiskDestructive, "destroys data"
	case networkPrograms[prog]:
		return tool.RiskNetwork, "network access"
	case installs(prog, args):
		return tool.RiskNetwork, "installs packages from the network"
	case !readOnlyPrograms[prog] && slices.ContainsFunc(args, sqlDestroys):
		return tool.RiskDestructive, "drops or truncates a database object"
	case readOnlyPrograms[prog]:
		return tool.RiskReadOnly, "reads"
	case fileTools[prog]:
		if slices.ContainsFunc(args, isBlockDevice) {
			return tool.RiskDestructive, "writes to a device"
		}
		return tool.RiskMutating, "changes files"
	case isShell(prog):
		return tool.RiskExec, "runs a shell script"
	}
	return tool.RiskExec, "runs " + prog
}

// judgeByName handles programs whose arguments decide their risk.
func judgeByName(prog string, args []string) (tool.Risk, string, bool) {
	flags := flagSet(args)
	switch prog {
	case "git":
		r, why := judgeGit(args)
		return r, why, true
	case "rm":
		if flags.short("rR") || flags.long("--recursive") {
			return tool.RiskDestructive, "deletes recursively", true
		}
		return tool.RiskMutating, "deletes files", true
	case "find":
		return judgeFind(args)
	case "dd":
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "of=") && isBlockDevice(a[3:]) }) {
			return tool.RiskDestructive, "writes to a device", true
		}
		return tool.RiskMutating, "copies data", true
	case "chmod", "chown", "chgrp":
		if flags.short("R") || flags.long("--recursive") {
			return tool.RiskDestructive, "changes permissions recursively", true
		}
		return tool.RiskMutating, "changes permissions", true
	case "sed":
		if flags.short("i") || flags.prefixed("--in-place") {
			return tool.RiskMutating, "edits files in place", true
		}
		if slices.ContainsFunc(args, sedWritesOrRuns.MatchString) {
			return tool.RiskExec, "a sed script that writes files or runs commands", true
		}
		return tool.RiskReadOnly, "reads", true
	case "gofmt", "tree":
		if flags.short("wo") {
			return tool.RiskMutating, "writes files", true
		}
		return tool.RiskReadOnly, "reads", true
	case "awk", "gawk", "mawk", "nawk":
		if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "system(") || strings.Contains(a, "|") }) {
			return tool.RiskExec, "runs programs from awk", true
		}
		return tool.RiskReadOnly, "reads", true
	case "sort":
		if flags.short("o") || flags.prefixed("--output") {
			return tool.RiskMutating, "writes its output to a file", true
		}
		return tool.RiskReadOnly, "reads", true
	case "rsync":
		return judgeRsync(args, flags)
	case "go":
		return judgeGo(args)
	case "docker", "podman", "nerdctl":
		return judgeContainer(args)
	case "kubectl", "helm", "terraform", "tofu", "pulumi":
		return judgeInfra(prog, args)
	case "python", "python3", "py":
		if len(args) > 2 && args[0] == "-m" && (args[1] == "pip" || args[1] == "ensurepip") && installs("pip", args[2:]) {
			return tool.RiskNetwork, "installs packages from the network", true
		}
	}
	return "", "", false
}

// judgeFind judges find's own actions; -exec commands are judged apart.
func judgeFind(args []string) (tool.Risk, string, bool) {
	switch {
	case slices.Contains(args, "-delete"):
		return tool.RiskDestructive, "find -delete deletes files", true
	case slices.ContainsFunc(args, func(a string) bool { return slices.Contains([]string{"-fprint", "-fprint0", "-fprintf", "-fls"}, a) }):
		return tool.RiskMutating, "find writes a file", true
	}
	return tool.RiskReadOnly, "reads", true
}

func judgeRsync(args []string, flags flags) (tool.Risk, string, bool) {
	if flags.prefixed("--delete") || flags.long("--remove-source-files") {
		return tool.RiskDestructive, "rsync deletes files", true
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if strings.HasPrefix(a, "rsync://") || remoteSpec(a) {
			return tool.RiskNetwork, "copies to or from another host", true
		}
	}
	return tool.RiskMutating, "copies files", true
}

// remoteSpec reports whether a looks like host:path (not ./a:b or C:\x).
func remoteSpec(a string) bool {
	host, _, ok := strings.Cut(a, ":")
	return ok && host != "" && !strings.Contains(host, "/") && len(host) > 1
}

func judgeGo(args []string) (tool.Risk, string, bool) {
	if len(args) == 0 {
		return tool.RiskReadOnly, "reads", true
	}
	switch args[0] {
	case "version", "doc", "help":
		return tool.RiskReadOnly, "reads", true
	case "env":
		if slices.Contains(args, "-w") || slices.Contains(args, "-u") {
			return tool.RiskMutating, "changes go env", true
		}
		return tool.RiskReadOnly, "reads", true
	}
	if installs("go", args) {
		return tool.RiskNetwork, "downloads Go modules", true
	}
	return tool.RiskExec, "runs go " + args[0], true
}

func judgeContainer(args []string) (tool.Risk, string, bool) {
	sub := firstPositional(args)
	switch {
	case slices.Contains(args, "prune") || sub == "volume" && (slices.Contains(args, "rm") || slices.Contains(args, "remove")):
		return tool.RiskDestructive, "deletes containers, images or volumes", true
	case slices.Contains([]string{"pull", "push", "login", "search"}, sub):
		return tool.RiskNetwork, "talks to a registry", true
	}
	return tool.RiskExec, "runs containers", true
}

func judgeInfra(prog string, args []string) (tool.Risk, string, bool) {
	sub := firstPositional(args)
	switch {
	case sub == "delete" || sub == "destroy" || sub == "uninstall" || sub == "drain" ||
		sub == "apply" && slices.Contains(args, "-destroy"):
		return tool.RiskDestructive, prog + " " + sub + " destroys infrastructure", true
	case prog == "terraform" || prog == "tofu":
		if slices.Contains([]string{"fmt", "validate", "version", "show", "output", "graph"}, sub) {
			return tool.RiskReadOnly, "reads", true
		}
	}
	return tool.RiskNetwork, prog + " talks to a remote system", true
}

func firstPositional(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// installs reports package installs, which fetch code from the network.
func installs(prog string, args []string) bool {
	sub := firstPositional(args)
	in := func(subs ...string) bool { return slices.Contains(subs, sub) }
	switch prog {
	case "apt", "apt-get", "aptitude", "yum", "dnf", "microdnf", "zypper", "snap", "port":
		return in("install", "in", "update", "upgrade", "dist-upgrade", "full-upgrade", "reinstall", "source", "download", "refresh")
	case "apk":
		return in("add", "update", "upgrade", "fetch")
	case "brew":
		return in("install", "reinstall", "upgrade", "update", "tap", "fetch")
	case "pacman", "yay":
		return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "-U") })
	case "pip", "pip3", "pipenv", "gem", "conda", "mamba", "micromamba", "composer", "rustup", "nvm", "volta":
		return in("install", "download", "add", "require", "update", "upgrade", "sync", "create", "toolchain")
	case "uv":
		return in("add", "sync", "lock", "tool", "python") || in("pip") && slices.Contains(args, "install")
	case "poetry", "bundle", "bundler":
		return in("add", "install", "update", "lock")
	case "cargo":
		return in("install", "add", "update", "fetch", "publish", "search")
	case "npm", "pnpm", "yarn", "bun":
		return sub == "" && (prog == "yarn" || prog == "pnpm") ||
			in("install", "i", "ci", "add", "update", "upgrade", "up", "publish", "dlx", "x", "create", "init") && !(prog == "npm" && sub == "init" && len(args) == 1)
	case "go":
		return in("get") || in("install") && slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "@") }) ||
			in("mod") && len(args) > 1 && (args[1] == "download" || args[1] == "tidy")
	}
	return false
}

// flags helps read a command's options.
type flags []string

func flagSet(args []string) flags {
	var f flags
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			f = append(f, a)
		}
	}
	return f
}

// short reports whether a short-option cluster (-rf) holds any of letters.
func (f flags) short(letters string) bool {
	return slices.ContainsFunc(f, func(a string) bool {
		return !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], letters)
	})
}

// long reports whether any of the long options is given exactly.
func (f flags) long(names ...string) bool {
	return slices.ContainsFunc(f, func(a string) bool { return slices.Contains(names, a) })
}

// prefixed reports whether an option starts with name (--delete-after).
func (f flags) prefixed(name string) bool {
	return slices.ContainsFunc(f, func(a string) bool { return strings.HasPrefix(a, name) })
}
