package config

import (
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// WriteDiagnostics prints diagnostics the way `sparrow config validate`
// shows them: severity, summary, file:line:column, the offending source
// lines and the detail. width wraps the detail text (0: no wrapping).
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, width uint, color bool) error {
	files := map[string]*hcl.File{}
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Filename == "" {
			continue
		}
		name := d.Subject.Filename
		if _, done := files[name]; done {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			continue // no source snippet, the position is still printed
		}
		if f, _ := hclsyntax.ParseConfig(src, name, hcl.InitialPos); f != nil {
			files[name] = f
		}
	}
	if err := hcl.NewDiagnosticTextWriter(w, files, width, color).WriteDiagnostics(diags); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}
