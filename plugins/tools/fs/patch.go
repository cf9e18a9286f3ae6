package fs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

type hunk struct {
	oldStart int
	old, new []string
	header   string
}

// parsePatch reads the hunks of a unified diff; file headers are ignored.
func parsePatch(patch string) ([]hunk, error) {
	var hunks []hunk
	var cur *hunk
	for i, line := range strings.Split(strings.TrimSuffix(patch, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "---") || strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "diff ") || strings.HasPrefix(line, "index "):
			continue
		case strings.HasPrefix(line, "@@"):
			m := hunkHeader.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("patch line %d: bad hunk header %q", i+1, line)
			}
			start, _ := strconv.Atoi(m[1])
			hunks = append(hunks, hunk{oldStart: start, header: line})
			cur = &hunks[len(hunks)-1]
		case cur == nil:
			return nil, fmt.Errorf("patch line %d: text before the first @@ hunk header", i+1)
		case strings.HasPrefix(line, "-"):
			cur.old = append(cur.old, line[1:])
		case strings.HasPrefix(line, "+"):
			cur.new = append(cur.new, line[1:])
		case strings.HasPrefix(line, " ") || line == "":
			text := strings.TrimPrefix(line, " ")
			cur.old = append(cur.old, text)
			cur.new = append(cur.new, text)
		case strings.HasPrefix(line, `\`):
			continue // "\ No newline at end of file"
		default:
			return nil, fmt.Errorf("patch line %d: want ' ', '-' or '+' at the start, got %q", i+1, line)
		}
	}
	if len(hunks) == 0 {
		return nil, fmt.Errorf("the patch has no @@ hunks")
	}
	return hunks, nil
}

// applyPatch applies a unified diff strictly: every hunk's context and
// removed lines must match the file, at the stated line or at exactly one
// other place after the previous hunk.
func applyPatch(content, patch string) (string, error) {
	hunks, err := parsePatch(patch)
	if err != nil {
		return "", err
	}
	trailing := strings.HasSuffix(content, "\n")
	lines := splitLines(content)
	pos := 0
	for _, h := range hunks {
		at := -1
		if want := h.oldStart - 1; want >= pos && matchAt(lines, h.old, want) {
			at = want
		} else {
			for i := pos; i+len(h.old) <= len(lines); i++ {
				if matchAt(lines, h.old, i) {
					if at >= 0 {
						return "", fmt.Errorf("hunk %q matches the file in more than one place; add context", h.header)
					}
					at = i
				}
			}
		}
		if at < 0 {
			return "", fmt.Errorf("hunk %q does not match the file; read it again and regenerate the patch", h.header)
		}
		lines = append(lines[:at], append(append([]string(nil), h.new...), lines[at+len(h.old):]...)...)
		pos = at + len(h.new)
	}
	out := strings.Join(lines, "\n")
	if trailing || (content == "" && len(lines) > 0) {
		out += "\n"
	}
	return out, nil
}

func matchAt(lines, want []string, at int) bool {
	if at < 0 || at+len(want) > len(lines) {
		return false
	}
	for i, w := range want {
		if lines[at+i] != w {
			return false
		}
	}
	return true
}
