// Package workspacetest builds workspaces for the file tools' tests.
package workspacetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tree creates files (slash-separated path → content) under a new temp
// workspace and returns it; a path ending in "/" is an empty directory.
func Tree(t testing.TB, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for p, content := range files {
		abs := filepath.Join(ws, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			Mkdir(t, abs)
			continue
		}
		Mkdir(t, filepath.Dir(abs))
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// Mkdir creates the directory p and its parents.
func Mkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Symlink creates link pointing at target.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Touch sets p's modification time to base+offset.
func Touch(t testing.TB, p string, base time.Time, offset time.Duration) {
	t.Helper()
	if err := os.Chtimes(p, base.Add(offset), base.Add(offset)); err != nil {
		t.Fatal(err)
	}
}

// Args builds a JSON arguments object from name, value pairs.
func Args(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}
