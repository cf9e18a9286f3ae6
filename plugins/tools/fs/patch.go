package fs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
)

// hunk is one @@ section of a unified diff.
type hunk struct {
	header   string
	oldStart int // as written: the first old line, or the line before when the old side is empty
	old, new []string
	// oldNoEOL and newNoEOL record "\ No newline at end of file" after
	// the old or new side's last line.
	oldNoEOL, newNoEOL bool
}

// parsePatch reads the hunks of a unified diff of one file. File headers
// (diff, index, ---, +++) are skipped, but when they name a file it must
// be rel. Hunk line counts are not checked: the body is what applies.
func parsePatch(patch, rel string) ([]hunk, error) {
	var hunks []hunk
	var last byte // kind of the previous body line: ' ', '-', '+'
	sawFile := false
	lines := strings.Split(strings.TrimRight(patch, "\n"), "\n")
	for i, line := range lines {
		n := i + 1
		cur := len(hunks) - 1
		switch {
		case strings.HasPrefix(line, "@@"):
			h, err := parseHunkHeader(line)
			if err != nil {
				return nil, fmt.Errorf("patch line %d: %v", n, err)
			}
			hunks = append(hunks, h)
			last = 0
		case cur < 0 || isFileHeader(line, lines, i):
			// Before the first hunk anything goes (diff, index, mode
			// lines); the "+++" header, when there, must name this file.
			if !strings.HasPrefix(line, "+++ ") {
				continue
			}
			if sawFile {
				return nil, fmt.Errorf("patch line %d: the patch changes more than one file; edit one file per call", n)
			}
			sawFile = true
			if name := patchFileName(line[4:]); name != "" && name != rel {
				return nil, fmt.Errorf("patch line %d: the patch is for %s, not %s", n, name, rel)
			}
		case line == "" || line[0] == ' ':
			text := strings.TrimPrefix(line, " ")
			hunks[cur].old = append(hunks[cur].old, text)
			hunks[cur].new = append(hunks[cur].new, text)
			last = ' '
		case line[0] == '-':
			hunks[cur].old = append(hunks[cur].old, line[1:])
			last = '-'
		case line[0] == '+':
			hunks[cur].new = append(hunks[cur].new, line[1:])
			last = '+'
		case line[0] == '\\':
			hunks[cur].oldNoEOL = hunks[cur].oldNoEOL || last == ' ' || last == '-'
			hunks[cur].newNoEOL = hunks[cur].newNoEOL || last == ' ' || last == '+'
		default:
			return nil, fmt.Errorf("patch line %d: a hunk line must start with ' ', '-' or '+', got %q", n, line)
		}
	}
	if len(hunks) == 0 {
		return nil, errors.New("the patch has no @@ hunks")
	}
	return hunks, nil
}

// isFileHeader reports whether lines[i] is part of a "--- a" / "+++ b"
// header pair followed by a hunk, rather than a removed line starting with
// "--" or an added one starting with "++".
func isFileHeader(line string, lines []string, i int) bool {
	switch {
	case strings.HasPrefix(line, "--- "):
		return i+2 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@")
	case strings.HasPrefix(line, "+++ "):
		return i > 0 && i+1 < len(lines) && strings.HasPrefix(lines[i-1], "--- ") && strings.HasPrefix(lines[i+1], "@@")
	}
	return false
}

// patchFileName is the workspace path a "+++" header names, "" for
// /dev/null or none.
func patchFileName(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if s == "/dev/null" || s == "" {
		return ""
	}
	if strings.HasPrefix(s, "b/") {
		s = s[2:]
	}
	return s
}

// parseHunkHeader reads "@@ -l[,n] +l[,n] @@ ...".
func parseHunkHeader(line string) (hunk, error) {
	bad := fmt.Errorf("bad hunk header %q, want \"@@ -LINE,COUNT +LINE,COUNT @@\"", line)
	f := strings.Fields(line)
	if len(f) < 4 || f[0] != "@@" || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return hunk{}, bad
	}
	start, _, _ := strings.Cut(f[1][1:], ",")
	n, err := strconv.Atoi(start)
	if err != nil || n < 0 {
		return hunk{}, bad
	}
	return hunk{header: line, oldStart: n}, nil
}

// applyPatch applies a unified diff strictly and all-or-nothing: each
// hunk's context and removed lines must equal the file's lines exactly,
// at the line its header states or, failing that, at exactly one place
// after the previous hunk. It returns the new content and the number of
// hunks applied.
func applyPatch(content, patch, rel string) (string, int, error) {
	hunks, err := parsePatch(patch, rel)
	if err != nil {
		return "", 0, err
	}
	trailing := content == "" || strings.HasSuffix(content, "\n")
	lines := splitLines(content)
	pos := 0
	for i, h := range hunks {
		at, err := locate(lines, h, pos)
		if err != nil {
			return "", 0, fmt.Errorf("hunk %d (%s): %v", i+1, h.header, err)
		}
		tail := append([]string(nil), lines[at+len(h.old):]...)
		lines = append(append(lines[:at], h.new...), tail...)
		pos = at + len(h.new)
		if len(tail) == 0 {
			switch {
			case h.newNoEOL:
				trailing = false
			case h.oldNoEOL:
				trailing = true
			}
		}
	}
	out := strings.Join(lines, "\n")
	if trailing && len(lines) > 0 {
		out += "\n"
	}
	return out, len(hunks), nil
}

// locate finds where h's old lines sit in lines, at or after pos.
func locate(lines []string, h hunk, pos int) (int, error) {
	want := h.oldStart - 1
	if len(h.old) == 0 {
		want = h.oldStart // a pure insertion goes after the stated line
	}
	if want >= pos && matchAt(lines, h.old, want) {
		return want, nil
	}
	if len(h.old) == 0 {
		return 0, fmt.Errorf("it inserts after line %d, but the file has %d lines", h.oldStart, len(lines))
	}
	at := -1
	for i := pos; i+len(h.old) <= len(lines); i++ {
		if matchAt(lines, h.old, i) {
			if at >= 0 {
				return 0, fmt.Errorf("its context and removed lines match at line %d and line %d; add context lines to make it unique", at+1, i+1)
			}
			at = i
		}
	}
	if at >= 0 {
		return at, nil
	}
	return 0, fmt.Errorf("its context and removed lines do not match the file%s; read the file again and regenerate the patch", mismatch(lines, h.old, want))
}

// mismatch describes the first line that differs when the hunk is laid at
// want, for the error.
func mismatch(lines, old []string, want int) string {
	if want < 0 || want >= len(lines) {
		return fmt.Sprintf(" (line %d is past the end: the file has %d lines)", want+1, len(lines))
	}
	for j, w := range old {
		if want+j >= len(lines) {
			return fmt.Sprintf(" (at line %d the file ends, the patch expects %q)", want+j+1, w)
		}
		if lines[want+j] != w {
			got := lines[want+j]
			return fmt.Sprintf(" (at line %d the file has %q, the patch expects %q)", want+j+1, clip(got, 120), clip(w, 120))
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) > n {
		return workspace.ValidText(s[:n]) + "…"
	}
	return workspace.ValidText(s)
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

// splitLines splits s into lines without their "\n"; a final newline does
// not start another line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
