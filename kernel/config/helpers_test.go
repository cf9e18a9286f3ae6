package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// writeFile writes content to dir/rel, creating parent directories, and
// returns the full path.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// envOf returns a getenv backed by a map.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// diagView is the part of a diagnostic tests compare: severity, summary,
// position as base-name:line:col, and the detail.
type diagView struct {
	Severity string
	Summary  string
	Pos      string
	Detail   string
}

func viewDiags(diags hcl.Diagnostics) []diagView {
	var out []diagView
	for _, d := range diags {
		v := diagView{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			v.Severity = "warning"
		}
		if d.Subject != nil {
			v.Pos = fmt.Sprintf("%s:%d:%d", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
		}
		out = append(out, v)
	}
	return out
}

// wantDiag matches a diagnostic whose detail contains DetailHas.
type wantDiag struct {
	Severity  string
	Summary   string
	Pos       string
	DetailHas string
}

// checkDiags compares diagnostics with expectations, in order.
func checkDiags(t *testing.T, diags hcl.Diagnostics, want []wantDiag) {
	t.Helper()
	got := viewDiags(diags)
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(got), len(want), formatViews(got))
	}
	for i, w := range want {
		g := got[i]
		if g.Severity != w.Severity || g.Summary != w.Summary || g.Pos != w.Pos || !strings.Contains(g.Detail, w.DetailHas) {
			t.Errorf("diagnostic %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func formatViews(vs []diagView) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "  %s %s: %s: %s\n", v.Severity, v.Pos, v.Summary, v.Detail)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }
