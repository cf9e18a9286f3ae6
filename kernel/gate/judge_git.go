package gate

import (
	"slices"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// gitReadOnly are git subcommands that only read.
var gitReadOnly = setOf(
	"status", "diff", "log", "show", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame", "grep", "describe",
	"shortlog", "rev-list", "name-rev", "merge-base", "show-ref", "for-each-ref", "version", "help", "whatchanged",
	"count-objects", "check-ignore", "check-attr", "var", "range-diff", "annotate", "cherry", "fsck",
	"verify-commit", "verify-tag", "show-branch",
)

// gitNetwork are git subcommands that talk to a remote.
var gitNetwork = setOf("fetch", "pull", "clone", "ls-remote", "archive", "request-pull", "send-email", "svn")

// gitRunsConfig reports a git command line that sets configuration with
// -c or --config-env: aliases ("!cmd"), core.pager, core.sshCommand and
// friends can run any program.
func gitRunsConfig(cmd []string) bool {
	for _, a := range cmd[1:] {
		switch {
		case a == "-c" || a == "--config-env" || strings.HasPrefix(a, "--config-env="):
			return true
		case !strings.HasPrefix(a, "-"):
			return false
		}
	}
	return false
}

// judgeGit judges a git command (global options already dropped).
func judgeGit(args []string) (tool.Risk, string) {
	if len(args) == 0 {
		return tool.RiskReadOnly, "reads"
	}
	sub, rest := args[0], args[1:]
	f := flagSet(rest)
	switch {
	case gitReadOnly[sub]:
		return tool.RiskReadOnly, "reads"
	case gitNetwork[sub]:
		return tool.RiskNetwork, "git " + sub + " talks to a remote"
	case sub == "push":
		return judgeGitPush(rest, f)
	case sub == "reset" && f.long("--hard"):
		return tool.RiskDestructive, "git reset --hard discards uncommitted work"
	case sub == "clean":
		switch {
		case f.short("n") || f.long("--dry-run"):
			return tool.RiskReadOnly, "reads"
		case f.long("--force") || f.short("f"):
			return tool.RiskDestructive, "git clean deletes untracked files"
		}
	case sub == "checkout" || sub == "restore" || sub == "switch":
		if discardsWork(sub, rest, f) {
			return tool.RiskDestructive, "git " + sub + " discards uncommitted changes"
		}
	case sub == "branch" || sub == "tag" || sub == "stash" || sub == "remote" || sub == "config" || sub == "submodule" || sub == "worktree":
		return judgeGitListing(sub, rest, f)
	case sub == "filter-branch" || sub == "filter-repo" || sub == "update-ref" && f.long("-d") ||
		sub == "reflog" && slices.Contains(rest, "expire") || sub == "gc" && f.prefixed("--prune") || sub == "prune":
		return tool.RiskDestructive, "git " + sub + " can destroy history"
	}
	return tool.RiskMutating, "git " + sub + " changes the repository"
}

func judgeGitPush(rest []string, f flags) (tool.Risk, string) {
	force := f.long("--force", "--mirror", "--delete", "--prune") || f.prefixed("--force-with-lease") ||
		f.prefixed("--force-if-includes") || f.short("fd")
	refs := slices.ContainsFunc(rest, func(a string) bool {
		return strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":") && len(a) > 1
	})
	if force || refs {
		return tool.RiskDestructive, "git push rewrites or deletes remote history"
	}
	return tool.RiskNetwork, "git push talks to a remote"
}

// discardsWork reports checkout/restore/switch forms that overwrite the
// working tree: a pathspec (git checkout -- x, git checkout ., git restore
// x without --staged) or --force / --discard-changes.
func discardsWork(sub string, rest []string, f flags) bool {
	if f.long("--force", "--discard-changes") || sub != "restore" && f.short("f") {
		return true
	}
	switch sub {
	case "restore":
		staged := f.long("--staged") || f.short("S")
		worktree := f.long("--worktree") || f.short("W")
		return (!staged || worktree) && firstPositional(rest) != ""
	case "checkout":
		return slices.Contains(rest, "--") || slices.Contains(rest, ".")
	}
	return false
}

// judgeGitListing judges subcommands that list when given no action.
func judgeGitListing(sub string, rest []string, f flags) (tool.Risk, string) {
	pos := firstPositional(rest)
	switch sub {
	case "branch":
		if f.short("D") || f.long("--delete") && f.long("--force") {
			return tool.RiskDestructive, "git branch -D deletes unmerged work"
		}
		if pos == "" && !f.short("dmMcC") && !f.long("--delete", "--move", "--copy", "--set-upstream-to", "--unset-upstream", "--edit-description") {
			return tool.RiskReadOnly, "reads"
		}
	case "tag":
		if pos == "" || f.short("l") || f.long("--list") || f.prefixed("--contains") || f.prefixed("--points-at") {
			return tool.RiskReadOnly, "reads"
		}
	case "stash":
		switch pos {
		case "list", "show":
			return tool.RiskReadOnly, "reads"
		case "drop", "clear":
			return tool.RiskDestructive, "git stash " + pos + " deletes stashed work"
		}
	case "remote":
		switch pos {
		case "", "get-url":
			return tool.RiskReadOnly, "reads"
		case "show", "update", "prune":
			return tool.RiskNetwork, "git remote " + pos + " talks to a remote"
		}
	case "config":
		if f.prefixed("--get") || f.long("--list", "-l") || len(positionals(rest)) == 1 && !f.long("--unset", "--unset-all", "--add") {
			return tool.RiskReadOnly, "reads"
		}
	case "submodule":
		switch pos {
		case "", "status", "summary":
			return tool.RiskReadOnly, "reads"
		case "foreach":
			return tool.RiskExec, "git submodule foreach runs a command in every submodule"
		}
		if pos == "update" || pos == "add" || pos == "sync" {
			return tool.RiskNetwork, "git submodule " + pos + " talks to a remote"
		}
	case "worktree":
		if pos == "list" {
			return tool.RiskReadOnly, "reads"
		}
	}
	return tool.RiskMutating, "git " + sub + " changes the repository"
}

func positionals(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}
