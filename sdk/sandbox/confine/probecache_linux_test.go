package confine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBwrap puts a bubblewrap on PATH that logs each start and answers
// like the real one, or fails every sandbox when broken.
func fakeBwrap(t *testing.T, broken bool) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "starts")
	status := "0"
	if broken {
		status = "1"
	}
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\necho 'bwrap: No permissions to create new namespace' >&2\nexit " + status + "\n"
	bin = filepath.Join(dir, "bwrap")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return bin, log
}

func starts(t *testing.T, log string) int {
	raw, _ := os.ReadFile(log)
	return strings.Count(string(raw), "\n")
}

// The bubblewrap check runs once per binary and boot; a changed binary,
// Forget, or a failing bubblewrap probe again.
func TestProbeCachedKeepsBwrapsAnswer(t *testing.T) {
	bin, log := fakeBwrap(t, false)
	file := filepath.Join(t.TempDir(), "cache", "probe.json")
	first := ProbeCached(context.Background(), file)
	if n := starts(t, log); n != 2 || first.Bwrap != bin+" 0.8.0" || !first.UserNS {
		t.Fatalf("first probe: %d starts, %+v", n, first)
	}
	again := ProbeCached(context.Background(), file)
	if n := starts(t, log); n != 2 || again.Bwrap != first.Bwrap || again.UserNS != first.UserNS || again.Landlock != first.Landlock {
		t.Fatalf("cached probe: %d starts, %+v", n, again)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(bin, later, later) // an upgraded bubblewrap
	ProbeCached(context.Background(), file)
	if n := starts(t, log); n != 4 {
		t.Fatalf("a changed binary was not probed again: %d starts", n)
	}
	Forget(file)
	ProbeCached(context.Background(), file)
	if n := starts(t, log); n != 6 {
		t.Fatalf("Forget did not drop the answer: %d starts", n)
	}
}

func TestProbeCachedNeverKeepsAFailure(t *testing.T) {
	_, log := fakeBwrap(t, true)
	file := filepath.Join(t.TempDir(), "probe.json")
	for i := range 2 {
		r := ProbeCached(context.Background(), file)
		if r.Usable() || !strings.Contains(strings.Join(r.Missing, " "), "No permissions") {
			t.Fatalf("probe %d: %+v", i, r)
		}
	}
	if n := starts(t, log); n != 4 {
		t.Fatalf("a failing bubblewrap was remembered: %d starts", n)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a failure was written to the cache")
	}
}
