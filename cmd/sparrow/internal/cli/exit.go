package cli

// Exit codes. docs/exit-codes.md is the user-facing list; keep them in step.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitError: the command failed; stderr says why.
	ExitError = 1
	// ExitUsage: unknown verb, bad flag or missing argument.
	ExitUsage = 2
	// ExitConfig: the configuration is invalid; stderr shows file:line:col.
	ExitConfig = 3
	// ExitPlugin: a plugin could not start or crashed; stderr names it.
	ExitPlugin = 4
	// ExitUnsupported: a backend cannot do what was asked.
	ExitUnsupported = 127
	// ExitInterrupted: stopped by Ctrl-C (SIGINT).
	ExitInterrupted = 130
	// ExitTerminated: stopped by SIGTERM.
	ExitTerminated = 143
)
