// Package search is Sparrow's glob and grep tools, built as one WASM
// module (cmd/search, GOOS=wasip1) that the kernel runs under wazero with
// no ambient authority: the workspace, read-only, at /workspace and
// nothing else. The same code builds natively, where its tests run.
//
// Invariants:
//   - Same names, arguments, output and limits as when they ran in the
//     gRPC tools process: the model must not see a difference.
//   - Every path is resolved inside the workspace by
//     plugins/tools/internal/workspace, the rules the gRPC file tools use;
//     walks skip .git and what .gitignore files ignore.
//   - A bad argument or a path that cannot be searched is the tool's
//     error (wasm.Response.Error), worded for the model. There is no
//     context: the host enforces the time limit by stopping the module.
//   - No gRPC, no sdk/tool: the module links only what it uses.
package search

import (
	"context"
	"fmt"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/sdk/wasm"
)

// Glob is the glob tool: files matching a pattern, newest first.
func Glob(req wasm.Request) (string, error) {
	var a globArgs
	if err := req.Decode(&a); err != nil {
		return "", err
	}
	return glob(req.Workspace, a)
}

// Grep is the grep tool: lines matching a regular expression, by path.
func Grep(req wasm.Request) (string, error) {
	var a grepArgs
	if err := req.Decode(&a); err != nil {
		return "", err
	}
	return grep(req.Workspace, a)
}

// walk visits every entry below start. The guest has no context to
// cancel: a call that runs too long is stopped by the host.
func walk(start workspace.Target, fn func(workspace.Entry) error) error {
	return workspace.Walk(context.Background(), start, 0, fn)
}

// walkError words a failed walk of the path argument p for the model.
func walkError(p string, err error) error {
	return fmt.Errorf("cannot walk %s: %v", p, err)
}
