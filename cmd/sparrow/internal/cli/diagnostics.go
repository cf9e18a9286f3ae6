package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// writeDiagnostics prints each diagnostic compiler-style, as
// "file:line:col: error: summary", with the source line, a caret under the
// range, and the detail (which carries any did-you-mean hint).
func writeDiagnostics(w io.Writer, diags hcl.Diagnostics) {
	sources := map[string][]string{}
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		if d.Subject == nil || d.Subject.Filename == "" {
			fmt.Fprintf(w, "%s: %s\n", sev, d.Summary)
		} else {
			r := d.Subject
			fmt.Fprintf(w, "%s:%d:%d: %s: %s\n", r.Filename, r.Start.Line, r.Start.Column, sev, d.Summary)
			lines, ok := sources[r.Filename]
			if !ok {
				if src, err := os.ReadFile(r.Filename); err == nil {
					lines = strings.Split(string(src), "\n")
				}
				sources[r.Filename] = lines
			}
			if r.Start.Line >= 1 && r.Start.Line <= len(lines) {
				line := lines[r.Start.Line-1]
				width := 1
				if r.End.Line == r.Start.Line && r.End.Column > r.Start.Column {
					width = r.End.Column - r.Start.Column
				}
				pad := strings.Repeat(" ", max(r.Start.Column-1, 0))
				fmt.Fprintf(w, "  %4d | %s\n       | %s%s\n", r.Start.Line, line, pad, strings.Repeat("^", width))
			}
		}
		if d.Detail != "" {
			fmt.Fprintf(w, "  %s\n", d.Detail)
		}
	}
}
