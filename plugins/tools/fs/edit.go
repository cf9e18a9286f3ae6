package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sparrow-cli/sparrow/plugins/tools/internal/workspace"
	"github.com/sparrow-cli/sparrow/sdk/tool"
)

//go:embed edit_file.md
var editFileDoc string

type editFile struct{}

func (editFile) Spec() tool.Spec {
	return tool.Spec{
		Name: "edit_file", Description: editFileDoc, Risk: tool.RiskMutating, PathArguments: []string{"path"},
		InputSchema: schema(`"path":{"type":"string","description":"Workspace-relative file path."},`+
			`"old_string":{"type":"string","description":"Exact text to replace."},`+
			`"new_string":{"type":"string","description":"Replacement text."},`+
			`"replace_all":{"type":"boolean","description":"Replace every occurrence of old_string."},`+
			`"patch":{"type":"string","description":"A unified diff of this one file, instead of old_string/new_string."}`, "path"),
	}
}

type editArgs struct {
	Path       string  `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
	Patch      *string `json:"patch"`
}

func (editFile) Invoke(_ context.Context, c *tool.Call) (tool.Result, error) {
	var a editArgs
	if err := c.DecodeArguments(&a); err != nil {
		return argError(err), nil
	}
	if a.Path == "" {
		return tool.Errorf("path is required"), nil
	}
	if err := a.check(); err != nil {
		return tool.Errorf("%v", err), nil
	}
	t, err := workspace.Resolve(c.Workspace, a.Path)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if err := writable(t, a.Path); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if _, err := workspace.RegularFile(t, a.Path); errors.Is(err, os.ErrNotExist) {
		return tool.Errorf("%v; use write_file to create it", err), nil
	} else if err != nil {
		return tool.Errorf("%v", err), nil
	}
	data, err := os.ReadFile(t.Abs)
	switch {
	case err != nil:
		return tool.Errorf("cannot read %s: %v", a.Path, err), nil
	case workspace.IsBinary(data):
		return tool.Errorf("%s is a binary file; edit_file changes text only", a.Path), nil
	}
	old := string(data)
	if a.Patch != nil {
		updated, n, err := applyPatch(old, *a.Patch, t.Rel)
		if err != nil {
			return tool.Errorf("the patch does not apply to %s, nothing was changed: %v", t.Rel, err), nil
		}
		return commit(t, old, updated, false, fmt.Sprintf("Applied %d hunk(s).", n))
	}
	updated, note, err := replace(old, *a.OldString, *a.NewString, a.ReplaceAll)
	if err != nil {
		return tool.Errorf("%s: %v", t.Rel, err), nil
	}
	return commit(t, old, updated, false, note)
}

// check enforces one of the two argument forms.
func (a editArgs) check() error {
	if a.Patch != nil {
		if a.OldString != nil || a.NewString != nil || a.ReplaceAll {
			return errors.New("give either patch, or old_string and new_string (with replace_all), not both")
		}
		if strings.TrimSpace(*a.Patch) == "" {
			return errors.New("patch is empty")
		}
		return nil
	}
	switch {
	case a.OldString == nil && a.NewString == nil:
		return errors.New("give old_string and new_string, or patch")
	case a.OldString == nil:
		return errors.New("old_string is required with new_string")
	case a.NewString == nil:
		return errors.New(`new_string is required with old_string (use "" to delete the text)`)
	case *a.OldString == "":
		return errors.New("old_string is empty; to create or replace a whole file use write_file")
	case *a.OldString == *a.NewString:
		return errors.New("old_string and new_string are identical; nothing would change")
	}
	return nil
}

// replace does the exact-string edit: old must occur once, or at least
// once with all set. A file with CRLF line ends is also tried with old and
// new converted from LF, since models rarely reproduce the CRs.
func replace(content, old, new string, all bool) (string, string, error) {
	n := strings.Count(content, old)
	if n == 0 && strings.Contains(content, "\r\n") && !strings.Contains(old, "\r") && strings.Contains(old, "\n") {
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		if m := strings.Count(content, crlf(old)); m > 0 {
			old, new, n = crlf(old), crlf(new), m
		}
	}
	switch {
	case n == 0:
		return "", "", fmt.Errorf("old_string was not found, nothing was changed. %s", closest(content, old))
	case n > 1 && !all:
		return "", "", fmt.Errorf("old_string occurs %d times (at lines %s), nothing was changed; "+
			"include more surrounding lines to make it unique, or set replace_all to true", n, occurrenceLines(content, old, 5))
	}
	if all {
		return strings.ReplaceAll(content, old, new), fmt.Sprintf("Replaced %d occurrence(s).", n), nil
	}
	return strings.Replace(content, old, new, 1), "", nil
}

// occurrenceLines lists the 1-based lines where old starts, at most max.
func occurrenceLines(content, old string, max int) string {
	var lines []string
	from := 0
	for len(lines) < max {
		i := strings.Index(content[from:], old)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(content[:from+i], "\n")+1))
		from += i + len(old)
	}
	if strings.Count(content, old) > max {
		lines = append(lines, "…")
	}
	return strings.Join(lines, ", ")
}

// closest is a hint for an old_string that was not found: where it would
// match if whitespace were ignored, or the line most like its first
// non-blank line.
func closest(content, old string) string {
	const advice = "Read the file again and copy the text exactly, whitespace included."
	lines := strings.Split(content, "\n")
	wantLines := strings.Split(strings.Trim(old, "\n"), "\n")
	if at := fuzzyBlock(lines, wantLines); at >= 0 {
		return fmt.Sprintf("It matches lines %d-%d if whitespace is ignored: copy their exact indentation and spacing.", at+1, at+len(wantLines))
	}
	first := ""
	for _, l := range wantLines {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first == "" {
		return advice
	}
	best, bestScore := -1, 0.0
	for i, l := range lines {
		if s := similarity(strings.TrimSpace(l), first); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 || bestScore < 0.5 {
		return advice
	}
	shown := strings.TrimRight(lines[best], "\r")
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	return fmt.Sprintf("The closest line is %d: %q. %s", best+1, workspace.ValidText(shown), advice)
}

// fuzzyBlock finds want in lines comparing whitespace-collapsed text; -1
// when it is not there.
func fuzzyBlock(lines, want []string) int {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	w := make([]string, len(want))
	for i, l := range want {
		w[i] = norm(l)
	}
	for i := 0; i+len(w) <= len(lines); i++ {
		ok := true
		for j := range w {
			if norm(lines[i+j]) != w[j] {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// similarity is the Dice coefficient of the character bigrams of a and b.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	bigrams := make(map[string]int, len(a))
	for i := 0; i+2 <= len(a); i++ {
		bigrams[a[i:i+2]]++
	}
	common := 0
	for i := 0; i+2 <= len(b); i++ {
		if bigrams[b[i:i+2]] > 0 {
			bigrams[b[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b)-2)
}
