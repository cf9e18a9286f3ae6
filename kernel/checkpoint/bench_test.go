package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkIncrementalCheckpoint snapshots a 10,000-file repository in
// which a few files changed since the last checkpoint: the private index's
// stat cache means only those are re-read.
func BenchmarkIncrementalCheckpoint(b *testing.B) {
	ctx := context.Background()
	ws := b.TempDir()
	for i := range 10000 {
		p := filepath.Join(ws, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("f%05d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("package p\n\nconst X%d = %d\n", i, i)), 0o644)
	}
	s, err := Open(ctx, ws, b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Create(ctx, Meta{RunID: "bench", Tool: "t", Summary: "first, full"}); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		b.StopTimer()
		for j := range 3 {
			n++
			os.WriteFile(filepath.Join(ws, "pkg000", fmt.Sprintf("f%05d.go", j)), []byte(fmt.Sprintf("package p // %d\n", n)), 0o644)
		}
		b.StartTimer()
		if _, err := s.Create(ctx, Meta{RunID: "bench", Tool: "t", Summary: "three files changed"}); err != nil {
			b.Fatal(err)
		}
	}
}
