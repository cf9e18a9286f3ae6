// Package fs is Sparrow's workspace file tools: read_file, write_file,
// edit_file and list_dir, served over gRPC by the built-in tools plugin.
// (glob and grep are the WASM plugin plugins/tools/search.)
//
// Invariants:
//   - Every path is workspace-relative; an absolute path is accepted only
//     when it lies inside the workspace. Paths are resolved with symlinks
//     followed and anything that ends up outside the workspace is refused,
//     whatever the kernel's gate already checked (defence in depth). The
//     rules live in plugins/tools/internal/workspace, shared with search.
//   - A bad argument is an error Result the model can fix (tool.Errorf),
//     never a Go error: a Go error means the plugin itself failed.
//   - Writes are atomic (temp file + fsync + rename in the same directory)
//     and keep an existing file's mode.
//   - Walks skip .git and what .gitignore files ignore.
package fs

import (
	"fmt"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

// Tools returns every file tool, for tool.Serve.
func Tools() []tool.Tool {
	return []tool.Tool{readFile{}, writeFile{}, editFile{}, listDir{}}
}

// writable refuses targets the mutating tools must not touch: the
// workspace itself and anything in .git (checkpoints live there).
func writable(t workspace.Target, p string) error {
	switch {
	case t.Rel == ".":
		return fmt.Errorf("%s is the workspace itself, not a file", p)
	case workspace.IsGitPath(t.Rel):
		return fmt.Errorf("%s is inside .git, which Sparrow's file tools do not change", p)
	}
	return nil
}

// argError is the error Result for a decoding failure.
func argError(err error) tool.Result {
	return tool.Errorf("%v", err)
}

// schema is a JSON Schema object with the given properties and required
// names, closed to other properties.
func schema(properties string, required ...string) []byte {
	req := "[]"
	if len(required) > 0 {
		req = `["` + strings.Join(required, `","`) + `"]`
	}
	return []byte(`{"type":"object","properties":{` + properties + `},"required":` + req + `,"additionalProperties":false}`)
}
