package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// maxInstructions caps how much of AGENTS.md enters the system prompt.
const maxInstructions = 32 << 10

// SystemPrompt assembles the run's system prompt: who Sparrow is, the
// workspace, and the project's own instructions (AGENTS.md, or CLAUDE.md
// when there is no AGENTS.md).
func SystemPrompt(workspace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `You are Sparrow, a careful coding agent working in the repository at %s (%s/%s).
Use the tools to read code before changing it, make the smallest change that does the task, and run the
project's tests when you can. Paths are relative to the workspace root. Every tool call passes a permission
gate; when a call is refused, do not retry it unchanged: explain or choose another way. When the task is done,
reply with a short summary of what you changed and stop calling tools.
`, workspace, runtime.GOOS, runtime.GOARCH)
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		data, err := os.ReadFile(filepath.Join(workspace, name))
		if err != nil {
			continue
		}
		text := string(data)
		if len(text) > maxInstructions {
			text = text[:maxInstructions] + "\n[… truncated …]"
		}
		fmt.Fprintf(&b, "\nProject instructions from %s:\n\n%s\n", name, text)
		break
	}
	return b.String()
}
