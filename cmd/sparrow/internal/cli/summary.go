package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// callSummary is a tool call in a few words: the tool and its most telling
// argument (command, path, pattern).
func callSummary(tool string, raw json.RawMessage) string {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return tool
	}
	for _, key := range []string{"command", "path", "pattern", "name", "message"} {
		if v, ok := args[key].(string); ok && v != "" {
			return fmt.Sprintf("%s %s", tool, clip(v, 80))
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("%s %s", tool, strings.Join(keys, ","))
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
